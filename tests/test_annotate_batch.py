"""``termnorm annotate SOURCE --out OUT`` as a resumable batch job (issue 43): chunks committed
one by one into ``OUT.parts/``; after a ``kill -9`` the same command finishes with every
document exactly once (error rows included), identical to an uninterrupted run, in every
output format; a changed input or spec is refused by name; ``--engine ray`` writes the local
engine's output; the progress bar counts documents."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from _cli import run_main
from _progress import record_bars, sigkill_after_parts
from termnorm.annotate import batch, chunks
from termnorm.annotate.batch import annotate_file
from termnorm.annotate.formats import OutputFormat
from termnorm.annotate.spec import AnnotateSpec
from termnorm.errors import MissingExtraError
from termnorm.io.output_lock import OutputBusyError, OutputLock
from termnorm.io.resumable import PROGRESS_NAME, ResumableParts, ResumeError, work_dir
from termnorm.search.spec import PipelineSpec

TEXTS = [
    "No asthma.\r\nMother: heart attack.",
    "Sick headache today.",
    "Rule out pneumonia.",
    "lung infection, HTN",
    "Anaemia and migraine headache.",
]
BAD_LINE = "{not json"


def _docs(n: int, bad_every: int = 0) -> list[str]:
    """``n`` JSON Lines documents, each with at least one concept; every ``bad_every``-th line
    is not JSON (a refused document with its own row)."""
    lines = []
    for i in range(n):
        if bad_every and i % bad_every == bad_every - 1:
            lines.append(BAD_LINE)
        else:
            lines.append(json.dumps({"id": f"d{i:03d}", "text": TEXTS[i % len(TEXTS)]}))
    return lines


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _doc_order(rows: list[dict[str, Any]]) -> list[str]:
    """The documents of JSON Lines output in the order they appear, each once per run of
    rows (a document written twice shows up twice)."""
    order: list[str] = []
    for row in rows:
        if not order or order[-1] != row["doc_id"]:
            order.append(str(row["doc_id"]))
    return order


def _leftovers(folder: Path) -> list[str]:
    return sorted(
        str(p.relative_to(folder))
        for p in folder.rglob("*")
        if ".tmp" in p.name or p.name.endswith(".parts") or p.name == ".termnorm.lock"
    )


@pytest.fixture()
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TERMNORM_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.fixture()
def spec(index_dir: Path, cache: Path) -> AnnotateSpec:
    return AnnotateSpec(PipelineSpec(index=index_dir, min_score=0.99))


class Interrupt(RuntimeError):
    pass


def _failing_after(monkeypatch: pytest.MonkeyPatch, chunks_done: int) -> list[int]:
    """Make the local engine raise :class:`Interrupt` on chunk ``chunks_done + 1``; the
    documents each chunk got, in a list."""
    calls: list[int] = []
    original = chunks.annotate_chunk

    def flaky(annotator: Any, docs: Any, fmt: OutputFormat) -> Any:
        calls.append(len(docs))
        if len(calls) > chunks_done:
            raise Interrupt("killed")
        return original(annotator, docs, fmt)

    monkeypatch.setattr(batch, "annotate_chunk", flaky)
    return calls


def _output(out: Path, fmt: OutputFormat) -> dict[str, bytes]:
    """The output as bytes per file (one entry, ``""``, for a file output)."""
    if fmt is OutputFormat.BRAT:
        return {p.name: p.read_bytes() for p in sorted(out.iterdir())}
    return {"": out.read_bytes()}


@pytest.mark.parametrize("fmt", list(OutputFormat))
def test_an_interrupted_job_resumes_into_the_uninterrupted_output(
    spec: AnnotateSpec, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: OutputFormat
) -> None:
    source = str(_write(tmp_path / "docs.jsonl", _docs(23, bad_every=7)))
    suffix = "" if fmt is OutputFormat.BRAT else f".{fmt.value}"
    ref, out = tmp_path / f"ref{suffix}", tmp_path / f"out{suffix}"
    whole = annotate_file(spec, source, ref, fmt=fmt, chunk_docs=5, show_progress=False)
    assert (whole.documents, whole.refused, whole.resumed_from) == (23, 3, 0)
    _failing_after(monkeypatch, 2)
    with pytest.raises(Interrupt):
        annotate_file(spec, source, out, fmt=fmt, chunk_docs=5, show_progress=False)
    assert not out.exists()
    progress = json.loads((work_dir(out) / PROGRESS_NAME).read_text())
    assert [p["rows"] for p in progress["parts"]] == [5, 5]
    calls = _failing_after(monkeypatch, 99)
    report = annotate_file(spec, source, out, fmt=fmt, chunk_docs=5, show_progress=False)
    assert calls == [5, 5, 3]  # only the 13 documents not written yet
    assert report.resumed_from == 10
    assert (report.documents, report.annotations, report.refused) == (
        whole.documents,
        whole.annotations,
        whole.refused,
    )
    assert _output(out, fmt) == _output(ref, fmt)
    assert _leftovers(tmp_path) == []


def test_every_document_once_in_order_with_its_error_rows(
    spec: AnnotateSpec, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = _docs(12, bad_every=4)
    lines[5] = json.dumps({"id": "long", "text": "asthma " * 40})
    source = str(_write(tmp_path / "docs.jsonl", lines))
    out = tmp_path / "out.jsonl"
    spec = spec.replace(max_document_chars=100)
    _failing_after(monkeypatch, 1)
    with pytest.raises(Interrupt):
        annotate_file(spec, source, out, chunk_docs=3, show_progress=False)
    monkeypatch.undo()
    monkeypatch.setenv("TERMNORM_CACHE", str(tmp_path / "cache"))
    report = annotate_file(spec, source, out, chunk_docs=3, show_progress=False)
    rows = _rows(out)
    expected = [
        f"docs.jsonl:{i + 1}" if i % 4 == 3 else ("long" if i == 5 else f"d{i:03d}")
        for i in range(12)
    ]
    assert _doc_order(rows) == expected
    errors = {r["doc_id"]: r["error"] for r in rows if "error" in r}
    assert set(errors) == {"docs.jsonl:4", "long", "docs.jsonl:8", "docs.jsonl:12"}
    assert "not JSON" in errors["docs.jsonl:4"] and "document 'long'" in errors["long"]
    assert (report.documents, report.refused, report.resumed_from) == (12, 4, 3)
    assert report.annotations == sum("error" not in r for r in rows)


def test_a_changed_input_or_spec_is_refused_by_name(
    spec: AnnotateSpec, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = _write(tmp_path / "docs.jsonl", _docs(9))
    out = tmp_path / "out.jsonl"
    _failing_after(monkeypatch, 1)
    with pytest.raises(Interrupt):
        annotate_file(spec, str(src), out, chunk_docs=4, show_progress=False)
    _failing_after(monkeypatch, 99)
    with pytest.raises(ResumeError, match=r"settings\.min_score: 0\.99 → 0\.5.*--restart"):
        annotate_file(
            spec.replace(search=spec.search.replace(min_score=0.5)),
            str(src),
            out,
            show_progress=False,
        )
    with pytest.raises(ResumeError, match=r"k: 5 → 2"):
        annotate_file(spec.replace(k=2), str(src), out, show_progress=False)
    with pytest.raises(ResumeError, match=r"format: \"jsonl\" → \"pubtator\""):
        annotate_file(spec, str(src), out, fmt=OutputFormat.PUBTATOR, show_progress=False)
    _write(src, _docs(10))
    with pytest.raises(ResumeError, match=r"input\.size: \d+ → \d+"):
        annotate_file(spec, str(src), out, show_progress=False)
    report = annotate_file(spec, str(src), out, restart=True, show_progress=False)
    assert report.resumed_from == 0 and _doc_order(_rows(out)) == [f"d{i:03d}" for i in range(10)]


def test_a_changed_folder_is_refused_by_its_files(
    spec: AnnotateSpec, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    for i in range(6):
        (folder / f"n{i}.txt").write_text(TEXTS[i % len(TEXTS)], encoding="utf-8")
    out = tmp_path / "out.jsonl"
    _failing_after(monkeypatch, 1)
    with pytest.raises(Interrupt):
        annotate_file(spec, str(folder), out, chunk_docs=2, show_progress=False)
    (folder / "n9.txt").write_text("asthma", encoding="utf-8")
    with pytest.raises(ResumeError, match=r"input\.files: 6 → 7; input\.digest: "):
        annotate_file(spec, str(folder), out, show_progress=False)


def test_the_cli_resumes_and_refuses_by_name(
    index_dir: Path, cache: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = _write(tmp_path / "docs.jsonl", _docs(8, bad_every=3))
    out = tmp_path / "out.jsonl"
    args = ["annotate", str(src), "--index", str(index_dir), "--min-score", "0.99"]
    args += ["--out", str(out), "--chunk-docs", "3"]
    code, _, err = run_main(args, capsys)
    assert code == 0, err
    assert "annotated 8 documents" in err and "2 refused" in err
    first = out.read_bytes()
    code, _, err = run_main([*args[:-4], "--min-score", "0.5", *args[-4:]], capsys)
    assert code == 0 and out.read_bytes() != first  # a finished job leaves no work folder
    work_dir(out).mkdir()
    (work_dir(out) / PROGRESS_NAME).write_text(
        json.dumps({"kind": "termnorm-parts", "version": 1, "job": {"format": "brat"}})
    )
    code, _, err = run_main(args, capsys)
    assert code == 1 and 'format: "brat" → "jsonl"' in err and "--restart" in err
    code, _, err = run_main([*args, "--restart"], capsys)
    assert code == 0 and out.read_bytes() == first


def test_an_out_that_cannot_take_the_format_is_refused(spec: AnnotateSpec, tmp_path: Path) -> None:
    src = str(_write(tmp_path / "docs.jsonl", _docs(2)))
    with pytest.raises(ValueError, match="is a folder; --format jsonl writes a file"):
        annotate_file(spec, src, tmp_path, show_progress=False)
    with pytest.raises(ValueError, match="is the input file"):
        annotate_file(spec, src, src, show_progress=False)
    with pytest.raises(ValueError, match="is a file; --format brat writes a folder"):
        annotate_file(spec, src, src, fmt=OutputFormat.BRAT, show_progress=False)


def test_a_second_run_on_the_same_out_fails_at_once(spec: AnnotateSpec, tmp_path: Path) -> None:
    src = str(_write(tmp_path / "docs.jsonl", _docs(3)))
    out = tmp_path / "out.jsonl"
    with (
        OutputLock(work_dir(out), out),
        pytest.raises(OutputBusyError, match=r"another run.*another --out"),
    ):
        annotate_file(spec, src, out, show_progress=False)
    assert not out.exists()
    work_dir(out).mkdir(exist_ok=True)  # the lock's folder
    (work_dir(out) / "notes.txt").write_text("mine")
    with pytest.raises(ResumeError, match=r"not a termnorm work folder.*another --out"):
        annotate_file(spec, src, out, show_progress=False)
    assert (work_dir(out) / "notes.txt").read_text() == "mine"


def test_ray_without_the_extra_or_without_out_is_refused_before_any_work(
    index_dir: Path,
    spec: AnnotateSpec,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    src = str(_write(tmp_path / "docs.jsonl", _docs(3)))
    args = ["annotate", src, "--index", str(index_dir), "--engine", "ray"]
    code, _, err = run_main(args, capsys)
    assert code == 2 and "--engine ray writes a batch job: give it with --out" in err
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    out = tmp_path / "out.jsonl"
    with pytest.raises(MissingExtraError, match=r"pip install 'termnorm\[ray\]'"):
        annotate_file(spec, src, out, engine="ray", show_progress=False)
    assert not out.exists() and not work_dir(out).exists()


def test_the_progress_bar_counts_documents_from_the_resumed_one(
    spec: AnnotateSpec, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bars = record_bars(monkeypatch, batch)
    src = str(_write(tmp_path / "docs.jsonl", _docs(11)))
    out = tmp_path / "out.jsonl"
    _failing_after(monkeypatch, 2)
    with pytest.raises(Interrupt):
        annotate_file(spec, src, out, chunk_docs=4)
    _failing_after(monkeypatch, 99)
    annotate_file(spec, src, out, chunk_docs=4)
    seen = [(b["total"], b["initial"], b["updates"], b["unit"]) for b in bars]
    assert seen == [(11, 0, 8, "doc"), (11, 8, 3, "doc")]


def test_folder_parts_killed_while_moved_finish_on_the_rerun(tmp_path: Path) -> None:
    """A kill while the finished parts' files are moved into the output folder: the rerun
    moves the rest, a later part's file of the same name still winning."""
    out = tmp_path / "brat"

    def folder(files: dict[str, str]) -> Any:
        def write(path: Path) -> None:
            path.mkdir()
            for name, text in files.items():
                (path / name).write_text(text)

        return write

    parts = ResumableParts(out, {"job": 1}, "")
    parts.commit_part(folder({"a.ann": "1", "b.ann": "1"}), 2)
    parts.commit_part(folder({"b.ann": "2", "c.ann": "2"}), 2)
    parts.close()
    out.mkdir()
    os.replace(work_dir(out) / "part-000000" / "a.ann", out / "a.ann")  # killed here
    again = ResumableParts(out, {"job": 1}, "")
    assert again.rows_done == 4
    again.finish_into_folder()
    assert {p.name: p.read_text() for p in out.iterdir()} == {
        "a.ann": "1",
        "b.ann": "2",
        "c.ann": "2",
    }
    assert not work_dir(out).exists()


SCRIPT = """
import sys, time
from termnorm.annotate.pipeline import Annotator
from termnorm.cli.main import main

original = Annotator.annotate
def slow(self, text, doc_id=""):
    time.sleep(float(sys.argv[1]))
    return original(self, text, doc_id)
Annotator.annotate = slow
main(sys.argv[2:])
"""


def test_killed_with_sigkill_the_same_command_finishes_every_document_once(
    index_dir: Path, cache: Path, tmp_path: Path
) -> None:
    """``kill -9`` of a running ``termnorm annotate`` (slowed per document), then the same
    command: every document exactly once, identical to an uninterrupted run."""
    src = _write(tmp_path / "docs.jsonl", _docs(120, bad_every=9))
    out, ref = tmp_path / "out.jsonl", tmp_path / "ref.jsonl"
    script = tmp_path / "run.py"
    script.write_text(SCRIPT)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "TERMNORM_CACHE": str(cache)}
    args = ["annotate", str(src), "--index", str(index_dir), "--min-score", "0.99"]
    args += ["--chunk-docs", "5"]
    spec = AnnotateSpec(PipelineSpec(index=index_dir, min_score=0.99))
    annotate_file(spec, str(src), ref, chunk_docs=5, show_progress=False)  # uninterrupted
    cmd = [sys.executable, str(script), "{}", *args, "--out", str(out)]
    proc = subprocess.Popen([a.format("0.03") for a in cmd], env=env)
    done = sigkill_after_parts(proc, work_dir(out) / PROGRESS_NAME, 3, timeout=240)
    assert 0 < done < 120 and not out.exists()
    subprocess.run([a.format("0") for a in cmd], env=env, check=True, timeout=300)
    rows = _rows(out)
    assert _doc_order(rows) == [
        f"docs.jsonl:{i + 1}" if i % 9 == 8 else f"d{i:03d}" for i in range(120)
    ]
    assert out.read_bytes() == ref.read_bytes()
    assert _leftovers(tmp_path) == []


@pytest.mark.slow  # Ray starts, and its actors import torch and load the index
def test_ray_writes_the_local_engines_output_and_resumes_it(
    local_ray: None,
    spec: AnnotateSpec,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from termnorm.annotate import ray_batch

    source = str(_write(tmp_path / "docs.jsonl", _docs(30, bad_every=7)))
    for fmt in (OutputFormat.JSONL, OutputFormat.BRAT):
        suffix = "" if fmt is OutputFormat.BRAT else ".jsonl"
        local, out = tmp_path / f"local-{fmt.value}{suffix}", tmp_path / f"ray-{fmt.value}{suffix}"
        annotate_file(spec, source, local, fmt=fmt, chunk_docs=4, show_progress=False)
        report = annotate_file(
            spec, source, out, fmt=fmt, chunk_docs=4, engine="ray", workers=2, show_progress=False
        )
        assert (report.documents, report.refused, report.engine) == (30, 4, "ray")
        assert _output(out, fmt) == _output(local, fmt)

    # the driver stops after committing 3 chunks; the rerun does the other 5 on Ray
    out = tmp_path / "resumed.jsonl"
    original, committed = ray_batch.commit_chunk, []

    def flaky(*args: Any) -> None:
        if len(committed) == 3:
            raise Interrupt("killed")
        committed.append(1)
        original(*args)

    monkeypatch.setattr(ray_batch, "commit_chunk", flaky)
    with pytest.raises(Interrupt):
        annotate_file(spec, source, out, chunk_docs=4, engine="ray", workers=2, show_progress=False)
    monkeypatch.setattr(ray_batch, "commit_chunk", original)
    with pytest.raises(ResumeError, match=r"engine: \"ray\" → \"local\""):
        annotate_file(spec, source, out, chunk_docs=4, show_progress=False)
    report = annotate_file(
        spec, source, out, chunk_docs=4, engine="ray", workers=2, show_progress=False
    )
    assert report.resumed_from == 12 and report.documents == 30
    assert out.read_bytes() == (tmp_path / "local-jsonl.jsonl").read_bytes()
