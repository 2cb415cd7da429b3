"""The mapping-project benchmarks' checks (issue 33): the concurrency audit finds a lost, a
double and an unreported decision; the review study's 95 %-precision threshold; the
review-while-mapping benchmark's per-phase summary and its queue rows' candidates."""

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
    init_project(
        "p",
        write_codes(tmp_path / "codes.csv"),
        "code",
        "label",
        settings=PipelineSettings(),
        db=db,
    )
    run_project("p", lambda _s, _p: conc.InstantMatcher(), db=db, show_progress=False)
    first = decide("p", "L001", "flag", reviewer="a", db=db)
    second = decide("p", "L001", "approve", reviewer="b", expect_version=first.version, db=db)
    third = decide("p", "L002", "no_match", reviewer="a", db=db)
    reported = {first.id, second.id, third.id}
    clean = conc.audit(db, reported)
    assert clean == {
        "trail": 3,
        "lost": 0,
        "unreported": 0,
        "double": 0,
        "rows_decided": 2,
        "rows_with_broken_trail": 0,
    }
    assert conc.audit(db, reported | {999})["lost"] == 1
    assert conc.audit(db, {first.id, second.id})["unreported"] == 1

    store = open_store("p", db)  # a second decision against a version already decided
    with store.session(write=True) as s:
        row = s.query(SourceRow).filter_by(code="L002").one()
        s.add(
            DecisionRow(
                project_id=row.project_id,
                row_id=row.id,
                row_version=third.row_version,
                reviewer="c",
                action="approve",
                created_at=utcnow(),
            )
        )
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


def test_the_page_calls_are_summed_up_per_phase_and_the_queue_rows_get_index_concepts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    bench = _script("review_while_mapping", monkeypatch)
    samples = [("next", 0.5, 0.010, 200), ("next", 1.5, 0.030, 200), ("next", 2.5, 0.900, 503),
               ("decide", 1.2, 0.020, 409), ("decide", 9.0, 5.0, 200)]  # fmt: skip
    writing = bench.summary(samples, 1.0, 3.0)  # the calls started in [1, 3)
    assert writing["next"] == {
        "n": 2,
        "p50_ms": 900.0,
        "p95_ms": 900.0,
        "max_ms": 900.0,
        "not_2xx": {"503": 1},
    }
    assert writing["decide"]["n"] == 1 and writing["decide"]["not_2xx"] == {"409": 1}
    assert set(writing) == {"next", "decide"}  # calls never made are left out

    concepts = pa.table(
        {"concept_id": [f"D:{i}" for i in range(20)], "name": [f"n{i}" for i in range(20)]}
    )
    pq.write_table(concepts, tmp_path / "concepts.parquet")
    matcher = bench.IndexConcepts(tmp_path)
    first, again = matcher.normalize_rows(["a b"], 5), matcher.normalize_rows(["a b"], 5)
    ranked = first[0].candidates
    assert first == again  # drawn from the text: the same row, the same candidates
    assert [c.rank for c in ranked] == [1, 2, 3, 4, 5]
    assert len({c.concept_id for c in ranked}) == 5
    assert all(c.name == "n" + c.concept_id[2:] for c in ranked)
    assert [c.score for c in ranked] == sorted((c.score for c in ranked), reverse=True)
