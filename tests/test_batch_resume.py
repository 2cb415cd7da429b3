"""Chunked, resumable batch files (issue 21, item 6): an interrupted run, even killed with
SIGKILL, resumes where it stopped; the output holds every input row exactly once, in order;
changed input, options or index are refused by name; no temporary file is left behind."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from _progress import record_bars, sigkill_after_parts
from termnorm.io.resumable import PROGRESS_NAME, ResumeError, work_dir
from termnorm.search import Normalizer
from termnorm.search.batch import normalize_file
from termnorm.search.file_spec import NormalizeFileSpec
from test_normalize_files import fake_normalizer, read_rows, write_rows

TERMS = ["q alpha", "q zeta", "", "q half", "42"]
ROWS = [{"id": str(i), "term": TERMS[i % len(TERMS)]} for i in range(23)]


@pytest.fixture()
def normalizer() -> Normalizer:
    return fake_normalizer()


def _leftovers(folder: Path) -> list[str]:
    """Hidden or temporary files, and work folders, anywhere under ``folder``."""
    return sorted(
        str(p.relative_to(folder))
        for p in folder.rglob("*")
        if p.name.startswith(".") or ".tmp" in p.name or p.name.endswith(".parts")
    )


class Interrupt(RuntimeError):
    pass


def _failing_after(normalizer: Normalizer, chunks: int) -> tuple[Normalizer, list[int]]:
    """``normalizer``, now raising :class:`Interrupt` on chunk ``chunks + 1``; and a list of
    how many texts each call got (``del normalizer.normalize_rows`` undoes it)."""
    calls: list[int] = []
    original = type(normalizer).normalize_rows.__get__(normalizer)

    def rows(texts: list[object], k: int = 1) -> Any:
        calls.append(len(texts))
        if len(calls) > chunks:
            raise Interrupt("killed")
        return original(texts, k)

    normalizer.normalize_rows = rows  # type: ignore[method-assign]
    return normalizer, calls


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".jsonl", ".parquet"])
def test_a_failed_run_resumes_after_its_last_chunk(suffix: str, tmp_path: Path) -> None:
    src, out, ref = tmp_path / f"in{suffix}", tmp_path / f"out{suffix}", tmp_path / f"ref{suffix}"
    write_rows(src, ROWS)
    base = fake_normalizer()
    normalize_file(base, NormalizeFileSpec.of(src, ref, k=2, chunk_rows=5, show_progress=False))
    flaky, _ = _failing_after(base, 2)
    with pytest.raises(Interrupt):
        normalize_file(
            flaky, NormalizeFileSpec.of(src, out, k=2, chunk_rows=5, show_progress=False)
        )
    assert not out.exists()
    progress = json.loads((work_dir(out) / PROGRESS_NAME).read_text())
    assert [p["rows"] for p in progress["parts"]] == [5, 5]
    counting, calls = _failing_after(base, 99)
    report = normalize_file(
        counting, NormalizeFileSpec.of(src, out, k=2, chunk_rows=5, show_progress=False)
    )
    assert calls == [5, 5, 3]  # only the 13 rows not written yet
    assert report.resumed_from == 10 and report.rows == 23
    assert report.errors == sum(1 for r in ROWS if r["term"] == "")  # earlier parts counted
    assert read_rows(out) == read_rows(ref)
    assert [r["id"] for r in read_rows(out)] == [r["id"] for r in ROWS]
    assert _leftovers(tmp_path) == []


def test_changed_input_options_or_index_are_refused_by_name(tmp_path: Path) -> None:
    src, out = tmp_path / "in.csv", tmp_path / "out.csv"
    write_rows(src, ROWS)
    base = fake_normalizer()
    _failing_after(base, 1)
    with pytest.raises(Interrupt):
        normalize_file(base, NormalizeFileSpec.of(src, out, chunk_rows=5, show_progress=False))
    del base.normalize_rows  # type: ignore[method-assign]
    changed = r"unfinished job with other settings \(k: 1 → 2\).*--restart"
    with pytest.raises(ResumeError, match=changed):
        normalize_file(base, NormalizeFileSpec.of(src, out, k=2, chunk_rows=5, show_progress=False))
    strict = base.configure(min_score=0.5)
    with pytest.raises(ResumeError, match=r"matcher\.config\.min_score: null → 0\.5"):
        normalize_file(strict, NormalizeFileSpec.of(src, out, chunk_rows=5, show_progress=False))
    rebuilt = fake_normalizer()
    rebuilt.index.card["created"] = "another build"
    with pytest.raises(
        ResumeError, match=r"matcher\.index\.created: \"[-\d:T+]+\" → \"another build"
    ):
        normalize_file(rebuilt, NormalizeFileSpec.of(src, out, chunk_rows=5, show_progress=False))
    write_rows(src, ROWS[:-1])
    with pytest.raises(ResumeError, match=r"input\.size: \d+ → \d+"):
        normalize_file(base, NormalizeFileSpec.of(src, out, chunk_rows=5, show_progress=False))
    report = normalize_file(
        base, NormalizeFileSpec.of(src, out, chunk_rows=5, restart=True, show_progress=False)
    )
    assert report.resumed_from == 0 and report.rows == len(read_rows(out)) == 22
    assert _leftovers(tmp_path) == []


def test_a_folder_that_is_not_a_work_folder_is_never_touched(
    normalizer: Normalizer, tmp_path: Path
) -> None:
    src, out = tmp_path / "in.csv", tmp_path / "out.csv"
    write_rows(src, ROWS)
    mine = work_dir(out)
    mine.mkdir()
    (mine / "notes.txt").write_text("mine")
    for restart in (False, True):
        with pytest.raises(ResumeError, match=r"out\.csv\.parts exists and is not a termnorm work"):
            normalize_file(
                normalizer, NormalizeFileSpec.of(src, out, restart=restart, show_progress=False)
            )
    assert (mine / "notes.txt").read_text() == "mine"


SCRIPT = """
import sys, time
sys.path[:0] = [{tests!r}]
from _index_fakes import TABLE, KeyedEncoder, unit
from termnorm.index import TermIndex
from termnorm.search import Normalizer
from termnorm.search.batch import normalize_file
from termnorm.search.file_spec import NormalizeFileSpec

encoder = KeyedEncoder(TABLE | {{"q half": unit(1, 1, 1, 1)}})
normalizer = Normalizer(TermIndex.load({index!r}), encoder)
original = normalizer.normalize_rows
def slow(texts, k=1):
    time.sleep(float(sys.argv[3]))
    return original(texts, k)
normalizer.normalize_rows = slow
normalize_file(normalizer, NormalizeFileSpec.of(sys.argv[1], sys.argv[2], chunk_rows=7, show_progress=False))
"""


def test_killed_with_sigkill_the_rerun_finishes_every_row_exactly_once(tmp_path: Path) -> None:
    src, out, ref = tmp_path / "in.jsonl", tmp_path / "out.jsonl", tmp_path / "ref.jsonl"
    rows = [{"id": i, "term": TERMS[i % len(TERMS)]} for i in range(200)]
    write_rows(src, rows)
    base = fake_normalizer()
    base.index.save(tmp_path / "idx")  # each run loads the same index
    normalize_file(base, NormalizeFileSpec.of(src, ref, chunk_rows=7, show_progress=False))
    script = tmp_path / "run.py"
    script.write_text(SCRIPT.format(tests=str(Path(__file__).parent), index=str(tmp_path / "idx")))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    cmd = [sys.executable, str(script), str(src), str(out)]
    proc = subprocess.Popen([*cmd, "0.05"], env=env)
    done = sigkill_after_parts(proc, work_dir(out) / PROGRESS_NAME, 3, timeout=120)
    assert 0 < done < len(rows) and not out.exists()
    subprocess.run([*cmd, "0"], env=env, check=True, timeout=300)
    back = read_rows(out)
    assert [r["id"] for r in back] == list(range(200))  # every row once, in order
    assert back == read_rows(ref)
    assert _leftovers(tmp_path) == []


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".parquet"])
def test_the_progress_bar_knows_the_total_and_starts_at_the_resumed_row(
    suffix: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import termnorm.search.batch as batch

    bars = record_bars(monkeypatch, batch)
    src, out = tmp_path / f"in{suffix}", tmp_path / f"out{suffix}"
    write_rows(src, ROWS)
    base = fake_normalizer()
    _failing_after(base, 2)
    with pytest.raises(Interrupt):
        normalize_file(base, NormalizeFileSpec.of(src, out, chunk_rows=5))
    del base.normalize_rows  # type: ignore[method-assign]
    normalize_file(base, NormalizeFileSpec.of(src, out, chunk_rows=5))
    assert [(b["total"], b["initial"], b["updates"]) for b in bars] == [(23, 0, 10), (23, 10, 13)]
