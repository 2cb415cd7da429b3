"""The mapping-project benchmarks' checks (issue 33): the concurrency audit finds a lost, a
double and an unreported decision; the review study's 95 %-precision threshold."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from _project_fixtures import write_codes
from termnorm.projects import PipelineSettings, decide, init_project, run_project
from termnorm.projects.models import DecisionRow, SourceRow, utcnow
from termnorm.projects.store import open_store

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


def _script(name: str, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(BENCH))  # the scripts import their siblings
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, name, module)
    spec.loader.exec_module(module)
    return module


def test_the_audit_finds_lost_double_and_unreported_decisions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    conc = _script("projects_concurrency", monkeypatch)
    db = str(tmp_path / "p.db")
    init_project("p", write_codes(tmp_path / "codes.csv"), "code", "label",
                 settings=PipelineSettings(), db=db)  # fmt: skip
    run_project("p", lambda _s, _p: conc.InstantMatcher(), db=db, show_progress=False)
    first = decide("p", "L001", "flag", reviewer="a", db=db)
    second = decide("p", "L001", "approve", reviewer="b", expect_version=first.version, db=db)
    third = decide("p", "L002", "no_match", reviewer="a", db=db)
    reported = {first.id, second.id, third.id}
    clean = conc.audit(db, reported)
    assert clean == {"trail": 3, "lost": 0, "unreported": 0, "double": 0, "rows_decided": 2,
                     "rows_with_broken_trail": 0}  # fmt: skip
    assert conc.audit(db, reported | {999})["lost"] == 1
    assert conc.audit(db, {first.id, second.id})["unreported"] == 1

    store = open_store("p", db)  # a second decision against a version already decided
    with store.session(write=True) as s:
        row = s.query(SourceRow).filter_by(code="L002").one()
        s.add(DecisionRow(project_id=row.project_id, row_id=row.id, row_version=third.row_version,
                          reviewer="c", action="approve", created_at=utcnow()))  # fmt: skip
    store.close()
    bad = conc.audit(db, reported)
    assert (bad["double"], bad["rows_with_broken_trail"], bad["unreported"]) == (1, 1, 1)


def test_the_threshold_is_where_the_fitted_precision_reaches_95(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    review = _script("projects_review", monkeypatch)
    reviewed = [(s / 100, s >= 60) for s in range(20, 90)]  # right from 0.60 up
    t = review.threshold(reviewed, [s / 100 for s in range(0, 100)], min_support=20)
    assert t is not None and 0.5 <= t < 0.6  # the set scoring >= t: still 95 % right
    assert review.threshold(reviewed[:10], [0.9], min_support=20) is None  # too few
    assert review.threshold([(0.5, True)] * 30, [0.9], min_support=20) is None  # one outcome
