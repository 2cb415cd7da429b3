"""Mapping projects end to end on SQLite and PostgreSQL: init → run → status → decide
(conflicts refused) → auto-approve → apply a new list version; approved mappings are
searched as domain synonyms by the next run."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from sqlalchemy import func, select

from _project_fixtures import CODES, build_index, postgres_url, project_db, write_codes  # noqa: F401
from termnorm import api
from termnorm.errors import DecisionError, StaleRowError, UnknownCodeError
from termnorm.projects import (
    PipelineSettings,
    RowState,
    apply_source,
    auto_approve,
    decide,
    init_project,
    run_project,
    status,
)
from termnorm.projects.models import CandidateRow, DecisionRow, SourceRow
from termnorm.projects.store import open_store


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory, tiny_bert_path: Path) -> Path:
    return build_index(tmp_path_factory.mktemp("project_index"), tiny_bert_path)


@pytest.fixture()
def project(tmp_path: Path, index: Path, project_db: str) -> tuple[str, str]:  # noqa: F811
    """A project of :data:`CODES` over the tiny index, mapped; ``(name, db)``."""
    db = project_db
    source = write_codes(tmp_path / "codes.csv")
    settings = PipelineSettings.of(index=index, k=3)
    report = init_project("labs", source, "code", "label", "count", ["unit"], settings, db=db)
    assert report.rows == len(CODES)
    run = run_project("labs", api.project_matcher, db=db, batch_rows=3, show_progress=False)
    assert (run.mapped, run.left, run.synonyms) == (len(CODES), 0, 0)
    return "labs", db


def _state(db: str, code: str) -> tuple[str, int]:
    store = open_store("labs", db)
    try:
        with store.session() as s:
            row = s.scalars(select(SourceRow).where(SourceRow.code == code)).one()
            return row.state, row.version
    finally:
        store.close()


def test_run_gives_every_row_k_candidates_and_status_counts_them(project: tuple[str, str]) -> None:
    name, db = project
    store = open_store(name, db)
    with store.session() as s:
        ranks = s.execute(
            select(
                CandidateRow.row_id,
                func.count(),
                func.min(CandidateRow.rank),
                func.max(CandidateRow.rank),
            ).group_by(CandidateRow.row_id)
        ).all()
        top = s.execute(
            select(SourceRow.code, CandidateRow.concept_id, CandidateRow.score)
            .join(CandidateRow, CandidateRow.row_id == SourceRow.id)
            .where(CandidateRow.rank == 1, SourceRow.code == "L001")
        ).one()
    store.close()
    assert len(ranks) == len(CODES) and all(r[1:] == (3, 1, 3) for r in ranks)
    assert top.concept_id == "T:0001" and top.score == pytest.approx(1.0, abs=1e-3)
    report = status(name, db=db, min_score=0.99)
    assert report.rows == len(CODES) and report.retired == 0
    assert report.states[RowState.TO_REVIEW.value] == len(CODES)
    assert report.auto is not None and report.auto.calibrated is False
    assert report.auto.expected_precision is None  # cosine scores are not probabilities
    assert report.auto.rows >= 5  # the texts that are KG terms score 1


def test_decisions_append_to_the_audit_trail_and_refuse_stale_versions(
    project: tuple[str, str],
) -> None:
    name, db = project
    _, version = _state(db, "L001")
    first = decide(name, "L001", "approve", reviewer="ann", expect_version=version, db=db)
    assert (first.concept_id, first.predicate, first.state) == ("T:0001", "exact", "approved")
    assert first.version == version + 1 and first.replaces_decision_id is None
    with pytest.raises(StaleRowError, match=r"changed since version .* --expect-version"):
        decide(name, "L001", "no_match", reviewer="bob", expect_version=version, db=db)
    second = decide(
        name,
        "L001",
        "pick",
        concept_id="T:0008",
        predicate="broad",
        reviewer="bob",
        expect_version=first.version,
        db=db,
    )
    assert second.replaces_decision_id == first.id and second.concept_name == "heart disease"
    note = decide(name, "L001", "comment", comment="check with the lab", reviewer="cy", db=db)
    assert note.version == second.version and note.state == "approved"  # a comment changes nothing
    with pytest.raises(DecisionError, match="--pick needs"):
        decide(name, "L002", "pick", reviewer="ann", db=db)
    with pytest.raises(DecisionError, match="reviewer"):
        decide(name, "L002", "approve", reviewer=" ", db=db)
    with pytest.raises(UnknownCodeError, match="NOPE"):
        decide(name, "NOPE", "approve", reviewer="ann", db=db)
    store = open_store(name, db)
    with store.session() as s:
        trail = s.execute(
            select(DecisionRow.action, DecisionRow.reviewer).order_by(DecisionRow.id)
        ).all()
    store.close()
    assert [tuple(t) for t in trail] == [("approve", "ann"), ("pick", "bob"), ("comment", "cy")]
    assert status(name, db=db).decisions == 3


def test_auto_approve_takes_rows_above_the_threshold_only(project: tuple[str, str]) -> None:
    name, db = project
    decide(name, "L002", "flag", reviewer="ann", db=db)  # flagged rows are left alone
    before = status(name, db=db, min_score=0.999).auto
    assert before is not None
    report = auto_approve(name, 0.999, reviewer="ann", db=db)
    assert report.approved == before.rows and report.expected_precision is None
    after = status(name, db=db, min_score=0.999)
    assert after.states["auto_approved"] == report.approved
    assert after.states["flagged"] == 1 and after.auto is not None and after.auto.rows == 0
    assert after.synonyms == 0  # machine approvals do not teach the search


def test_an_approved_mapping_is_searched_by_the_next_run(
    project: tuple[str, str], tmp_path: Path
) -> None:
    """'zzqx blorp' is no KG term: picked as T:0005 it becomes a synonym, and the same text
    under a new code is then mapped to T:0005 at score 1 (through the domain synonyms)."""
    name, db = project
    decide(name, "L005", "pick", concept_id="T:0005", reviewer="ann", db=db)
    assert status(name, db=db).synonyms == 1
    source = write_codes(tmp_path / "codes_v2.csv", [*CODES, ("L008", "zzqx blorp", "1", "")])
    applied = apply_source(name, source, db=db)
    assert (applied.unchanged, applied.added, applied.changed) == (len(CODES), 1, 0)
    run = run_project(name, api.project_matcher, db=db, show_progress=False)
    assert (run.mapped, run.synonyms) == (1, 1)
    store = open_store(name, db)
    with store.session() as s:
        best = s.execute(
            select(CandidateRow.concept_id, CandidateRow.score, CandidateRow.source)
            .join(SourceRow, SourceRow.id == CandidateRow.row_id)
            .where(SourceRow.code == "L008", CandidateRow.rank == 1)
        ).one()
    store.close()
    assert best.concept_id == "T:0005" and best.score == pytest.approx(1.0, abs=1e-3)
    assert best.source == "domain"


def test_apply_keeps_unchanged_rows_requeues_changed_and_retires_removed(
    project: tuple[str, str], tmp_path: Path
) -> None:
    name, db = project
    decide(name, "L001", "approve", reviewer="ann", db=db)
    decide(name, "L002", "approve", reviewer="ann", db=db)
    rows = [r for r in CODES if r[0] != "L003"]  # L003 removed
    rows = [(c, "high BP" if c == "L002" else t, f, u) for c, t, f, u in rows]  # L002 changed
    rows.append(("L009", "pneumonitis", "3", ""))  # new
    report = apply_source(name, write_codes(tmp_path / "v2.csv", rows), db=db)
    assert (report.unchanged, report.changed, report.added, report.retired) == (5, 1, 1, 1)
    assert _state(db, "L001")[0] == "approved"
    assert _state(db, "L002")[0] == "to_map" and _state(db, "L009")[0] == "to_map"
    now = status(name, db=db)
    assert now.retired == 1 and now.rows == len(CODES)  # 6 kept + 1 new, L003 retired
    assert now.decisions == 2  # the audit trail keeps the decision on the old L002 text
    with pytest.raises(DecisionError, match="retired"):
        decide(name, "L003", "approve", reviewer="ann", db=db)
    run = run_project(name, api.project_matcher, db=db, show_progress=False)
    assert run.mapped == 2
    back = apply_source(name, write_codes(tmp_path / "v3.csv", CODES), db=db)
    assert back.restored == 1 and _state(db, "L003")[0] == "to_review"


def test_remap_re_searches_open_rows_only(project: tuple[str, str]) -> None:
    name, db = project
    decide(name, "L001", "approve", reviewer="ann", db=db)
    state, version = _state(db, "L001")
    open_before = _state(db, "L004")[1]
    run = run_project(name, api.project_matcher, db=db, remap=True, show_progress=False)
    assert run.remapped == len(CODES) - 1 and run.mapped == 0 and run.synonyms == 1
    assert _state(db, "L001") == (state, version)  # decided: untouched
    assert _state(db, "L004")[1] == open_before + 1  # re-mapped: a new version


def test_concurrent_reviewers_of_one_version_one_wins_the_rest_conflict(
    project: tuple[str, str],
) -> None:
    """8 reviewers decide the same row version at once (threads, one open store each):
    exactly one decision is written, the others are conflicts; nothing is lost or doubled."""
    name, db = project
    _, version = _state(db, "L004")
    barrier = threading.Barrier(8)
    outcomes: list[str] = []

    def review(i: int) -> None:
        store = open_store(name, db)
        try:
            barrier.wait()
            decide(name, "L004", "approve", reviewer=f"r{i}", expect_version=version, db=store)
            outcomes.append("written")
        except StaleRowError:
            outcomes.append("conflict")
        finally:
            store.close()

    threads = [threading.Thread(target=review, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sorted(outcomes) == ["conflict"] * 7 + ["written"]
    assert _state(db, "L004") == ("approved", version + 1)
    assert status(name, db=db).decisions == 1


def test_a_domain_strategy_searches_the_ontology_until_the_first_approval(
    tmp_path: Path, index: Path
) -> None:
    db = tmp_path / "p.db"
    settings = PipelineSettings.of(index=index, strategy="d-t", k=2)
    init_project("p", write_codes(tmp_path / "c.csv"), "code", "label", settings=settings, db=db)
    assert run_project("p", api.project_matcher, db=db, show_progress=False).mapped == len(CODES)
    decide("p", "L005", "pick", concept_id="T:0005", reviewer="ann", db=db)
    report = run_project("p", api.project_matcher, db=db, remap=True, show_progress=False)
    assert report.synonyms == 1 and report.remapped == len(CODES) - 1
    store = open_store("p", db)
    with store.session() as s:  # d-t now searches the one synonym: every open row gets T:0005
        tops = set(
            s.scalars(
                select(CandidateRow.concept_id)
                .join(SourceRow, SourceRow.id == CandidateRow.row_id)
                .where(CandidateRow.rank == 1, SourceRow.state == "to_review")
            )
        )
    store.close()
    assert tops == {"T:0005"}
