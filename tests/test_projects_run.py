"""``map run`` is resumable: a crash in the search, a failure inside a batch's transaction
or a ``kill -9`` leaves every row mapped or still to map, never half, and running again maps
every row exactly once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import pytest
from sqlalchemy import func, select

from _project_crash import SlowMatcher
from _project_fixtures import CODES, build_index, write_codes
from termnorm import api
from termnorm.projects import PipelineSettings, init_project, run_project, status
from termnorm.projects.models import CandidateRow, SourceRow
from termnorm.projects.store import open_store
from termnorm.search.candidate import Candidate, RowMatcher, RowResult
from termnorm.search.spec import PipelineSpec

HERE = Path(__file__).resolve().parent


class Crash(RuntimeError):
    pass


class CrashingMatcher:
    """``inner``, crashing on call number ``at`` (a search failure), or writing a broken
    candidate (no concept ID: the database refuses it) on that call when ``in_write``."""

    def __init__(self, inner: RowMatcher, at: int, in_write: bool = False) -> None:
        self.inner, self.at, self.in_write, self.calls = inner, at, in_write, 0

    def normalize_rows(self, texts: Sequence[object], k: int = 5) -> list[RowResult]:
        self.calls += 1
        results = self.inner.normalize_rows(texts, k)
        if self.calls != self.at:
            return results
        if not self.in_write:
            raise Crash("the search died")
        broken = Candidate(None, "x", 0.5, "x", 1)  # type: ignore[arg-type]
        return [results[0], RowResult([broken]), *results[2:]]


def _rows_exactly_once(db: Path | str) -> dict[str, int]:
    """Each live row's candidate count, checking ranks 1..n each once."""
    store = open_store("p", db)
    with store.session() as s:
        ranks = s.execute(
            select(
                SourceRow.code,
                func.count(CandidateRow.id),
                func.count(func.distinct(CandidateRow.rank)),
                func.max(CandidateRow.rank),
            )
            .outerjoin(CandidateRow, CandidateRow.row_id == SourceRow.id)
            .group_by(SourceRow.code)
        ).all()
    store.close()
    assert all(n == distinct == (top or 0) for _c, n, distinct, top in ranks)
    return {code: n for code, n, _d, _t in ranks}


@pytest.mark.parametrize("in_write", [False, True], ids=["search-crash", "write-crash"])
def test_a_crashed_run_resumes_and_maps_every_row_exactly_once(
    tmp_path: Path, tiny_bert_path: Path, in_write: bool
) -> None:
    index = build_index(tmp_path, tiny_bert_path)
    db = tmp_path / "p.db"
    init_project(
        "p",
        write_codes(tmp_path / "codes.csv"),
        "code",
        "label",
        settings=PipelineSettings.of(index=index, k=2),
        db=db,
    )

    def crashing(spec: PipelineSpec, synonyms: Sequence[tuple[str, str]]) -> RowMatcher:
        return CrashingMatcher(api.project_matcher(spec, synonyms), at=2, in_write=in_write)  # type: ignore[return-value]

    with pytest.raises(Exception) as died:
        run_project("p", crashing, db=db, batch_rows=3, show_progress=False)
    assert isinstance(died.value, Crash) != in_write  # the write crash is the database's error
    states = status("p", db=db).states
    assert (states["to_review"], states["to_map"]) == (3, len(CODES) - 3)  # batch 1 only
    counts = _rows_exactly_once(db)
    assert sorted(n for n in counts.values()) == [0] * (len(CODES) - 3) + [2] * 3
    report = run_project("p", api.project_matcher, db=db, batch_rows=3, show_progress=False)
    assert (report.mapped, report.left) == (len(CODES) - 3, 0)
    assert set(_rows_exactly_once(db).values()) == {2}


def test_kill_9_mid_run_loses_nothing_and_the_next_run_finishes(tmp_path: Path) -> None:
    db = tmp_path / "p.db"
    rows = [(f"C{i:05d}", f"term number {i}", "1", "") for i in range(2000)]
    init_project("big", write_codes(tmp_path / "codes.csv", rows), "code", "label", db=db)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE.parent / "src"), str(HERE)])}
    child = subprocess.Popen([sys.executable, str(HERE / "_project_crash.py"), str(db)], env=env)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            mapped = status("big", db=db).states["to_review"]
            if mapped >= 200 or child.poll() is not None:
                break
            time.sleep(0.05)
        assert child.poll() is None, "the run ended before it could be killed"
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait(30)
    states = status("big", db=db).states
    assert 200 <= states["to_review"] < len(rows) and states["to_review"] % 50 == 0
    assert states["to_review"] + states["to_map"] == len(rows)
    report = run_project(
        "big",
        lambda _s, _p: SlowMatcher(),
        db=db,
        batch_rows=500,
        show_progress=False,  # type: ignore[arg-type,return-value]
    )
    assert report.mapped == states["to_map"] and report.left == 0
    store = open_store("big", db)
    with store.session() as s:
        per_row = (
            s.execute(select(func.count(CandidateRow.id)).group_by(CandidateRow.row_id))
            .scalars()
            .all()
        )
    store.close()
    assert len(per_row) == len(rows) and set(per_row) == {5}  # every row once, k=5 each
