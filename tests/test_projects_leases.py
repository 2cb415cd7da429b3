"""Reviewers and leases of the review page, on SQLite and PostgreSQL: tokens stored hashed,
the queue leased in priority order, rows leased to others skipped, expired leases taken,
decisions refused on someone else's row or a stale version, concurrent reviewers never given
the same row; an older database is upgraded to the reviewer table."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from sqlalchemy import create_engine, inspect, select, text, update

from _project_fixtures import fake_mapped, postgres_url, project_db  # noqa: F401
from termnorm.errors import LeaseHeldError, ReviewerError, StaleRowError
from termnorm.projects import (
    acquire,
    acquire_next,
    add_reviewer,
    decide,
    decide_leased,
    list_reviewers,
    release,
    remove_reviewer,
)
from termnorm.projects.leases import queue_size
from termnorm.projects.migrate import _config, head_revision
from termnorm.projects.models import DecisionRow, LeaseRow, SourceRow
from termnorm.projects.reviewers import reviewer_of, token_digest
from termnorm.projects.store import database_url, open_store


def _project(tmp_path: Path, db: str) -> str:
    return str(fake_mapped(tmp_path, db))


def _expire(db: str, code: str) -> None:
    store = open_store("p", db)
    with store.session(write=True) as s:
        row_id = s.scalars(select(SourceRow.id).where(SourceRow.code == code)).one()
        past = LeaseRow.expires_at - timedelta(hours=1)
        s.execute(update(LeaseRow).where(LeaseRow.row_id == row_id).values(expires_at=past))
    store.close()


def test_reviewer_tokens_are_stored_hashed_rotated_and_removed(
    tmp_path: Path,
    project_db: str,  # noqa: F811
) -> None:
    db = _project(tmp_path, project_db)
    ann = add_reviewer("p", " ann ", db=db)
    assert ann.name == "ann" and ann.token.startswith("tnr_") and len(ann.token) > 30
    store = open_store("p", db)
    try:
        with store.session() as s:
            stored = s.execute(text("SELECT name, token_sha256 FROM reviewer")).all()
            assert [tuple(r) for r in stored] == [("ann", token_digest(ann.token))]
            assert reviewer_of(s, 1, ann.token) == "ann" and reviewer_of(s, 1, "tnr_x") is None
        with pytest.raises(ReviewerError, match="--rotate"):
            add_reviewer("p", "ann", db=db)
        rotated = add_reviewer("p", "ann", rotate=True, db=db)
        with store.session() as s:
            assert reviewer_of(s, 1, ann.token) is None
            assert reviewer_of(s, 1, rotated.token) == "ann"
        add_reviewer("p", "bob", db=db)
        assert [r.name for r in list_reviewers("p", db=db)] == ["ann", "bob"]
        remove_reviewer("p", "ann", db=db)
        with store.session() as s:
            assert reviewer_of(s, 1, rotated.token) is None
        with pytest.raises(ReviewerError, match=r"no reviewer .ann..*reviewer list"):
            remove_reviewer("p", "ann", db=db)
        with pytest.raises(ReviewerError, match="1 to 200 characters"):
            add_reviewer("p", "  ", db=db)
    finally:
        store.close()


def test_next_leases_the_queue_in_order_and_skips_rows_leased_to_others(
    tmp_path: Path,
    project_db: str,  # noqa: F811
) -> None:
    db = _project(tmp_path, project_db)
    first = acquire_next("p", "ann", db=db)
    assert first is not None and first.row.code == "R1" and first.reviewer == "ann"
    assert len(first.row.candidates) == 5 and first.to_dict()["lease"]["reviewer"] == "ann"
    second = acquire_next("p", "bob", db=db)
    assert second is not None and second.row.code == "R2"  # R1 is ann's
    assert queue_size("p", "carol", db=db) == 2 and queue_size("p", "ann", db=db) == 3
    # ann skips R1: it is given back, and her next row is the first one nobody holds
    skipped = acquire_next("p", "ann", skip=["R1"], db=db)
    assert skipped is not None and skipped.row.code == "R3"
    again = acquire_next("p", "carol", db=db)
    assert again is not None and again.row.code == "R1"  # ann gave it back
    with pytest.raises(LeaseHeldError, match="'R1' is being reviewed by carol"):
        acquire("p", "R1", "ann", db=db)
    assert release("p", "R1", "carol", db=db) and not release("p", "R1", "carol", db=db)
    assert acquire("p", "R1", "ann", db=db).row.code == "R1"
    with pytest.raises(ValueError, match="more than 0 minutes"):
        acquire_next("p", "ann", minutes=0, db=db)


def test_a_row_decided_between_the_queue_read_and_the_lease_is_passed_over(
    tmp_path: Path,
    project_db: str,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What PostgreSQL allows: someone decides the queue's first row (and gives its lease
    back) after ``next`` read the queue, before it took the lease."""
    from termnorm.projects import leases

    db = _project(tmp_path, project_db)
    real_take = leases._take

    def decided_meanwhile(session: Any, row_id: int, *args: Any) -> bool:
        session.execute(
            update(SourceRow)
            .where(SourceRow.id == row_id, SourceRow.code == "R1")
            .values(state="no_match", version=SourceRow.version + 1)
            .execution_options(synchronize_session=False)
        )
        return real_take(session, row_id, *args)

    monkeypatch.setattr(leases, "_take", decided_meanwhile)
    leased = acquire_next("p", "ann", db=db)
    assert leased is not None and leased.row.code == "R2"
    store = open_store("p", db)
    try:
        with store.session() as s:
            held = s.execute(select(SourceRow.code).join(LeaseRow, LeaseRow.row_id == SourceRow.id))
            assert [c for (c,) in held] == ["R2"]
    finally:
        store.close()


def test_an_expired_lease_can_be_taken(tmp_path: Path, project_db: str) -> None:  # noqa: F811
    db = _project(tmp_path, project_db)
    assert acquire("p", "R1", "ann", db=db).row.code == "R1"
    nxt = acquire_next("p", "bob", db=db)
    assert nxt is not None and nxt.row.code == "R2"
    _expire(db, "R1")
    taken = acquire_next("p", "bob", db=db)
    assert taken is not None and taken.row.code == "R1" and taken.reviewer == "bob"
    with pytest.raises(LeaseHeldError, match="bob"):
        decide_leased("p", "R1", "approve", reviewer="ann", version=2, db=db)


def test_decisions_under_a_lease_refuse_others_and_stale_versions(
    tmp_path: Path,
    project_db: str,  # noqa: F811
) -> None:
    db = _project(tmp_path, project_db)
    leased = acquire("p", "R1", "ann", db=db)
    version = leased.row.version
    with pytest.raises(LeaseHeldError, match="being reviewed by ann"):
        decide_leased("p", "R1", "no_match", reviewer="bob", version=version, db=db)
    note = decide_leased(
        "p", "R1", "comment", reviewer="ann", version=version, comment="unit?", db=db
    )
    assert note.version == version  # a comment keeps the version and the lease
    with pytest.raises(LeaseHeldError):
        decide_leased("p", "R1", "approve", reviewer="bob", version=version, db=db)
    record = decide_leased(
        "p",
        "R1",
        "pick",
        reviewer="ann",
        version=version,
        concept_id="X:9",
        concept_name="picked by hand",
        predicate="broad",
        db=db,
        concepts={"X:9": ("X:9", "picked by hand")}.__getitem__,  # the index, by hand
    )
    assert (record.state, record.concept_id, record.concept_name, record.predicate) == (
        "approved",
        "X:9",
        "picked by hand",
        "broad",
    )
    # the lease is given back; bob saw the old version: refused, nothing written
    with pytest.raises(StaleRowError, match=f"since version {version}.*map show p R1"):
        decide_leased("p", "R1", "no_match", reviewer="bob", version=version, db=db)
    store = open_store("p", db)
    try:
        with store.session() as s:
            trail = s.execute(
                select(DecisionRow.reviewer, DecisionRow.action, DecisionRow.row_version).order_by(
                    DecisionRow.id
                )
            ).all()
            assert [tuple(t) for t in trail] == [
                ("ann", "comment", version),
                ("ann", "pick", version),
            ]
            assert s.scalars(select(LeaseRow)).all() == []
    finally:
        store.close()


def test_a_guard_is_held_around_a_decision_inside_its_transaction(
    tmp_path: Path,
    project_db: str,  # noqa: F811
) -> None:
    db = _project(tmp_path, project_db)
    seen: list[tuple[str, str]] = []

    @contextlib.contextmanager
    def refusing(session: Any, row: SourceRow, action: Any) -> Iterator[None]:
        seen.append((row.code, action.value))
        yield
        raise ReviewerError("refused after the decision")

    with pytest.raises(ReviewerError, match="refused after the decision"):
        decide("p", "R1", "no_match", reviewer="ann", db=db, guard=refusing)
    assert seen == [("R1", "no_match")]
    store = open_store("p", db)
    try:
        with store.session() as s:
            assert s.scalars(select(DecisionRow)).all() == []  # rolled back with the guard
    finally:
        store.close()
    assert decide("p", "R1", "no_match", reviewer="ann", db=db).state == "no_match"


def test_reviewers_racing_for_the_queue_never_get_the_same_row(
    tmp_path: Path,
    project_db: str,  # noqa: F811
) -> None:
    db = _project(tmp_path, project_db)
    got: dict[str, str | None] = {}
    start = threading.Barrier(4)

    def review(name: str) -> None:
        start.wait()
        leased = acquire_next("p", name, db=db)
        got[name] = None if leased is None else leased.row.code

    threads = [threading.Thread(target=review, args=(f"r{i}",)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sorted(c for c in got.values() if c) == ["R1", "R2", "R3", "R4"]


def test_a_database_of_the_first_revision_is_upgraded(tmp_path: Path) -> None:
    url = database_url("p", tmp_path / "old.db")
    engine = create_engine(url)
    config = _config()
    with engine.begin() as conn:
        config.attributes["connection"] = conn
        command.upgrade(config, "0001_initial")
    assert "reviewer" not in inspect(engine).get_table_names()
    engine.dispose()
    store = open_store("p", tmp_path / "old.db")
    try:
        assert "reviewer" in inspect(store.engine).get_table_names()
        with store.engine.connect() as conn:
            version = conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
        assert version == head_revision()
    finally:
        store.close()
