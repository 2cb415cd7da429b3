"""Reading rows for review: one row with its candidates and decision history
(:func:`show_row`), and the review queue (:func:`review_queue`), most useful first.

The queue orders rows by *frequency × uncertainty*: a code that occurs often and whose top
candidate is weak is reviewed first. Uncertainty is ``1 − top score`` (1 for a row without
candidates); a missing frequency counts as 1. Rows leased to another reviewer (``lease``,
not expired) are left out, so reviewers working at once get different rows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Select, and_, func, select
from sqlalchemy.orm import Session, aliased

from termnorm.projects.decisions import find_row
from termnorm.projects.models import (
    CandidateRow,
    DecisionRow,
    JsonReady,
    LeaseRow,
    SourceRow,
    utcnow,
)
from termnorm.projects.states import RowState
from termnorm.projects.store import DEFAULT_BUSY_TIMEOUT, DatabaseLike, open_project

__all__ = [
    "QueueEntry",
    "RowView",
    "live_rows_select",
    "queue_select",
    "review_queue",
    "row_view",
    "show_row",
]


def live_rows_select(project_id: int) -> Select[SourceRow, DecisionRow, CandidateRow]:
    """``(row, current decision or None, top candidate or None)`` of every live (not
    retired) row of the project, in row order: what the exports write."""
    top = aliased(CandidateRow)
    return (
        select(SourceRow, DecisionRow, top)
        .outerjoin(DecisionRow, DecisionRow.id == SourceRow.decision_id)
        .outerjoin(top, and_(top.row_id == SourceRow.id, top.rank == 1))
        .where(SourceRow.project_id == project_id, SourceRow.retired.is_(False))
        .order_by(SourceRow.id)
    )


@dataclass(frozen=True)
class RowView(JsonReady):
    """A row as a reviewer sees it: ``version`` (what ``expect_version`` names), its
    ``candidates`` (rank, concept, name, matched text, source, score) and every decision on
    it, oldest first."""

    code: str
    text: str
    frequency: float | None
    context: dict[str, Any] | None
    state: str
    version: int
    retired: bool
    map_error: str | None
    candidates: list[dict[str, Any]] = field(default_factory=list)
    decisions: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class QueueEntry(JsonReady):
    """One row of the review queue with its top candidate and priority."""

    code: str
    text: str
    version: int
    frequency: float | None
    concept_id: str | None
    score: float | None
    priority: float


def show_row(
    project: str,
    code: str,
    *,
    db: DatabaseLike = None,
    busy_timeout: float = DEFAULT_BUSY_TIMEOUT,
) -> RowView:
    """The :class:`RowView` of ``code`` (:class:`~termnorm.errors.UnknownCodeError`
    when the project has no such row)."""
    with open_project(project, db, busy_timeout=busy_timeout) as (_store, session, proj):
        return row_view(session, find_row(session, proj.id, code))


def row_view(session: Session, row: SourceRow) -> RowView:
    """The :class:`RowView` of ``row``, read in ``session``."""
    candidates = session.scalars(
        select(CandidateRow).where(CandidateRow.row_id == row.id).order_by(CandidateRow.rank)
    ).all()
    decisions = session.scalars(
        select(DecisionRow).where(DecisionRow.row_id == row.id).order_by(DecisionRow.id)
    ).all()
    return RowView(
        row.code,
        row.text,
        row.frequency,
        row.context,
        row.state,
        row.version,
        row.retired,
        row.map_error,
        [
            {
                "rank": c.rank,
                "concept_id": c.concept_id,
                "name": c.name,
                "matched_text": c.matched_text,
                "source": c.source,
                "term_source": c.term_source,
                "score": c.score,
            }
            for c in candidates
        ],
        [
            {
                "id": d.id,
                "action": d.action,
                "reviewer": d.reviewer,
                "concept_id": d.concept_id,
                "concept_name": d.concept_name,
                "predicate": d.predicate,
                "confidence": d.confidence,
                "comment": d.comment,
                "row_version": d.row_version,
                "created_at": d.created_at.isoformat(),
                "replaces_decision_id": d.replaces_decision_id,
            }
            for d in decisions
        ],
    )


def queue_select(
    project_id: int, states: tuple[RowState, ...], reviewer: str | None
) -> Select[SourceRow, str | None, float | None, float]:
    """The queue's query: ``(row, top concept, top score, priority)`` of the live rows in
    ``states`` not leased to anyone but ``reviewer``, highest priority first (see the
    module); the caller adds a limit and further conditions."""
    top = aliased(CandidateRow)
    uncertainty = 1.0 - func.coalesce(top.score, 0.0)
    priority = func.coalesce(SourceRow.frequency, 1.0) * uncertainty
    leased = select(LeaseRow.row_id).where(
        LeaseRow.expires_at > utcnow(),
        *([LeaseRow.reviewer != reviewer] if reviewer is not None else []),
    )
    return (
        select(SourceRow, top.concept_id, top.score, priority)
        .outerjoin(top, and_(top.row_id == SourceRow.id, top.rank == 1))
        .where(
            SourceRow.project_id == project_id,
            SourceRow.retired.is_(False),
            SourceRow.state.in_([s.value for s in states]),
            SourceRow.id.not_in(leased),
        )
        .order_by(priority.desc(), SourceRow.id)
    )


def review_queue(
    project: str,
    *,
    limit: int = 50,
    states: tuple[RowState, ...] = (RowState.TO_REVIEW,),
    reviewer: str | None = None,
    db: DatabaseLike = None,
    busy_timeout: float = DEFAULT_BUSY_TIMEOUT,
) -> list[QueueEntry]:
    """The next ``limit`` live rows in ``states``, highest priority first (see the module);
    rows leased to anyone but ``reviewer`` are left out."""
    with open_project(project, db, busy_timeout=busy_timeout) as (_store, session, proj):
        query = queue_select(proj.id, states, reviewer).limit(limit)
        return [
            QueueEntry(r.code, r.text, r.version, r.frequency, cid, score, float(p))
            for r, cid, score, p in session.execute(query).all()
        ]
