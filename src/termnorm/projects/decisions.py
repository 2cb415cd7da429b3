"""Review decisions: approve, pick, no match, flag, comment, auto-approve — appended to the
audit trail, never overwriting one another.

Every decision is a new ``decision`` row naming the reviewer, the row version it was made
against and the decision it replaces; the row's state, current decision and version change
in the same transaction, by a compare-and-set on the version (``UPDATE ... WHERE version =
v``), so two reviewers deciding the same row at once cannot both win: the second gets
:class:`~termnorm.errors.StaleRowError` and nothing is written. A comment changes
neither state nor version.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import and_, select, update
from sqlalchemy.orm import Session

from termnorm.errors import DecisionError, StaleRowError, UnknownCodeError
from termnorm.projects.concepts import ConceptResolver, checked_name, project_concepts
from termnorm.projects.models import (
    CandidateRow,
    DecisionRow,
    JsonReady,
    ProjectRow,
    SourceRow,
    utcnow,
)
from termnorm.projects.settings import PipelineSettings, check_min_score
from termnorm.projects.states import Action, Predicate, RowState
from termnorm.projects.storable import storable_problem
from termnorm.projects.store import DEFAULT_BUSY_TIMEOUT, DatabaseLike, open_project

__all__ = [
    "AutoApproveReport",
    "DecisionRecord",
    "ReviewedRow",
    "RowGuard",
    "append_decision",
    "auto_approve",
    "decide",
    "decide_row",
    "find_row",
    "learned_synonyms",
    "reviewed_rows",
]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class DecisionRecord(JsonReady):
    """One decision as stored, with the row's ``code``, ``state`` and ``version`` after it."""

    id: int
    code: str
    action: str
    reviewer: str
    concept_id: str | None
    concept_name: str | None
    predicate: str | None
    confidence: float | None
    comment: str | None
    created_at: datetime
    row_version: int
    version: int
    state: str
    replaces_decision_id: int | None


@dataclass(frozen=True)
class AutoApproveReport(JsonReady):
    """What :func:`auto_approve` did: rows approved at ``min_score``; ``calibrated``: scores
    were probabilities (a learned combiner), so ``expected_precision`` is their mean."""

    approved: int
    min_score: float
    calibrated: bool
    expected_precision: float | None


def find_row(session: Session, project_id: int, code: str) -> SourceRow:
    """The row of ``code``; :class:`UnknownCodeError` when the project has none."""
    found = session.scalars(
        select(SourceRow).where(SourceRow.project_id == project_id, SourceRow.code == code)
    ).first()
    if found is None:
        raise UnknownCodeError(f"no row with code {code!r} in this project")
    return found


def append_decision(
    session: Session,
    row: SourceRow,
    action: Action,
    reviewer: str,
    concept: tuple[str, str | None, float | None] | None = None,
    predicate: Predicate | None = None,
    comment: str | None = None,
    at: datetime | None = None,
) -> DecisionRecord:
    """Append one decision on ``row`` (as the session last read it) and move the row to the
    action's state and a new version, in ``session``'s transaction; ``concept`` is
    ``(id, name, confidence)``; ``at``: when it was decided (default now; an import keeps
    the time another tool recorded). :class:`StaleRowError` when the row's version changed
    underneath (the caller's transaction must then roll back)."""
    now, version = utcnow(), row.version
    decided = at or now
    changes = action.state is not None
    decision = DecisionRow(
        project_id=row.project_id,
        row_id=row.id,
        row_version=version,
        reviewer=reviewer,
        action=action.value,
        concept_id=concept[0] if concept else None,
        concept_name=concept[1] if concept else None,
        confidence=concept[2] if concept else None,
        predicate=predicate.value if predicate else None,
        comment=comment,
        created_at=decided,
        replaces_decision_id=row.decision_id if changes else None,
    )
    session.add(decision)
    session.flush()
    state = action.state.value if action.state is not None else row.state
    if changes:
        done = session.execute(
            update(SourceRow)
            .where(SourceRow.id == row.id, SourceRow.version == version)
            .values(state=state, decision_id=decision.id, version=version + 1, updated_at=now)
            .execution_options(synchronize_session=False)
        )
        if done.rowcount != 1:  # type: ignore[attr-defined]
            session.expire(row)
            raise StaleRowError(row.code, version, row.version)
        session.expire(row)
    return DecisionRecord(
        decision.id,
        row.code,
        action.value,
        reviewer,
        decision.concept_id,
        decision.concept_name,
        decision.predicate,
        decision.confidence,
        comment,
        decided,
        version,
        version + 1 if changes else version,
        state,
        decision.replaces_decision_id,
    )


def _candidate(session: Session, row_id: int, concept_id: str | None) -> CandidateRow | None:
    """The row's top candidate (``concept_id`` None) or its candidate of that concept."""
    query = select(CandidateRow).where(CandidateRow.row_id == row_id)
    if concept_id is None:
        query = query.where(CandidateRow.rank == 1)
    else:
        query = query.where(CandidateRow.concept_id == concept_id).order_by(CandidateRow.rank)
    return session.scalars(query).first()


def _check_text(text: str | None, what: str) -> None:
    """:class:`DecisionError` when ``text`` holds a character no project stores."""
    problem = storable_problem(text, what)
    if problem:
        raise DecisionError(problem)


def _check(action: Action, reviewer: str, concept_id: str | None, comment: str | None) -> None:
    _check_text(reviewer, "the reviewer's name")
    _check_text(comment, "the comment")
    if not reviewer.strip():
        raise DecisionError("a decision needs the reviewer's name (--reviewer NAME)")
    if action is Action.PICK and not concept_id:
        raise DecisionError("--pick needs the concept ID picked")
    if action in {Action.APPROVE, Action.NO_MATCH, Action.COMMENT} and concept_id:
        raise DecisionError(f"{action.value} takes no concept ID (to choose one, use --pick ID)")
    if action is Action.COMMENT and not (comment and comment.strip()):
        raise DecisionError("a comment needs its text (--comment TEXT)")
    if action is Action.AUTO_APPROVE:
        raise DecisionError("auto-approve is termnorm map auto-approve, not one row's decision")


def _chosen(
    session: Session,
    row: SourceRow,
    concept_id: str,
    concept_name: str | None,
    concepts: ConceptResolver | None,
) -> tuple[str, str, float | None]:
    """``(id, name, confidence)`` of the concept ``concept_id`` names: the row's candidate of
    that ID, else the index's concept (:mod:`termnorm.projects.concepts`; a candidate found
    through a bare ID keeps its score). ``concept_name``, when given, must be its name."""
    found = _candidate(session, row.id, concept_id)
    if found is None:
        if concepts is None:
            project = session.get(ProjectRow, row.project_id)
            assert project is not None  # the row's foreign key
            concepts = project_concepts(PipelineSettings.from_row(project).spec)
        resolved, name = concepts(concept_id)
        found = _candidate(session, row.id, resolved)
        if found is None:
            return resolved, checked_name(resolved, name, concept_name), None
    return found.concept_id, checked_name(found.concept_id, found.name, concept_name), found.score


def decide_row(
    session: Session,
    row: SourceRow,
    action: Action,
    reviewer: str,
    concept_id: str | None = None,
    predicate: Predicate | str | None = None,
    comment: str | None = None,
    expect_version: int | None = None,
    concept_name: str | None = None,
    concepts: ConceptResolver | None = None,
) -> DecisionRecord:
    """:func:`decide` on a row already read in ``session``'s writing transaction (the review
    page adds its lease check in the same transaction). ``concept_name``: the name the
    client shows for ``concept_id``, refused unless it is the index's; ``concepts``: the
    project's index as a resolver (``None``: read from the project's settings when a
    concept is not among the row's candidates)."""
    _check(action, reviewer, concept_id, comment)
    chosen = Predicate(predicate) if predicate is not None else None
    if chosen is None and action in {Action.APPROVE, Action.PICK}:
        chosen = Predicate.EXACT
    if row.retired:
        raise DecisionError(
            f"row {row.code!r} is retired (the newest source list dropped it): nothing written"
        )
    if expect_version is not None and row.version != expect_version:
        raise StaleRowError(row.code, expect_version, row.version)
    concept: tuple[str, str, float | None] | None = None
    if action is Action.APPROVE:
        found = _candidate(session, row.id, None)
        if found is None:
            raise DecisionError(
                f"row {row.code!r} has no candidate to approve (state {row.state}): map it "
                "first (termnorm map run), or choose with --pick ID or --no-match"
            )
        concept = (found.concept_id, found.name, found.score)
    elif action in {Action.PICK, Action.FLAG} and concept_id:
        concept = _chosen(session, row, concept_id, concept_name, concepts)
    return append_decision(session, row, action, reviewer, concept, chosen, comment)


RowGuard = Callable[[Session, SourceRow, Action], AbstractContextManager[object]]
"""What a face holds around a decision, inside its transaction: called with the session, the
row and the action before the decision, left after it (the review page: the row's lease)."""


def decide(
    project: str,
    code: str,
    action: Action | str,
    *,
    reviewer: str,
    concept_id: str | None = None,
    predicate: Predicate | str | None = None,
    comment: str | None = None,
    expect_version: int | None = None,
    concept_name: str | None = None,
    concepts: ConceptResolver | None = None,
    db: DatabaseLike = None,
    busy_timeout: float = DEFAULT_BUSY_TIMEOUT,
    guard: RowGuard | None = None,
) -> DecisionRecord:
    """Record ``reviewer``'s decision on the row of ``code`` (see the module).

    ``approve`` takes the row's top candidate; ``pick`` the concept ``concept_id`` (a
    candidate, or a concept the reviewer searched by hand: resolved through the project's
    index as ``termnorm lookup`` does, bare and alternative IDs included, and stored with
    the index's ID and name; an ID the index lacks is a :class:`DecisionError`, see
    :mod:`termnorm.projects.concepts`; ``concepts`` is that index when the caller holds it;
    a ``concept_name`` that is not the index's name of ``concept_id`` is refused);
    ``flag`` asks for a second opinion (optionally naming a concept, resolved alike); ``predicate`` (``exact``, default for
    approve/pick, ``broad``, ``narrow``) says how code and concept relate. With
    ``expect_version`` (the version the reviewer saw) a row changed since is refused with
    :class:`StaleRowError`; without it the decision applies to the row as it is now.
    Retired rows and approving a row without candidates are :class:`DecisionError`.
    ``guard`` is held around the decision in its transaction (:data:`RowGuard`)."""
    action = Action(action)
    _check(action, reviewer, concept_id, comment)
    try:
        with open_project(project, db, write=True, busy_timeout=busy_timeout) as opened:
            _, session, proj = opened
            row = find_row(session, proj.id, code)
            with guard(session, row, action) if guard else contextlib.nullcontext():
                record = decide_row(
                    session,
                    row,
                    action,
                    reviewer,
                    concept_id,
                    predicate,
                    comment,
                    expect_version,
                    concept_name,
                    concepts,
                )
    except StaleRowError as exc:  # name the project in what to run
        raise StaleRowError(exc.code, exc.expected, exc.current, project) from None
    logger.info("%s: %s %s by %s", project, record.action, code, reviewer)
    return record


def auto_approve(
    project: str,
    min_score: float,
    *,
    reviewer: str,
    db: DatabaseLike = None,
    busy_timeout: float = DEFAULT_BUSY_TIMEOUT,
) -> AutoApproveReport:
    """Approve the top candidate of every row still to review whose score is at least
    ``min_score``, as ``auto_approve`` decisions of ``reviewer`` (who set the threshold),
    in one transaction. Rows decided, flagged or retired are left alone. A ``min_score``
    outside the range of scores is a ``ValueError`` (:func:`check_min_score`)."""
    check_min_score(min_score)
    _check_text(reviewer, "the reviewer's name")
    if not reviewer.strip():
        raise DecisionError("auto-approve needs the name of who sets the threshold (--reviewer)")
    with open_project(project, db, write=True, busy_timeout=busy_timeout) as (_, session, proj):
        settings = PipelineSettings.from_row(proj)
        top = (
            select(SourceRow, CandidateRow)
            .join(CandidateRow, and_(CandidateRow.row_id == SourceRow.id, CandidateRow.rank == 1))
            .where(
                SourceRow.project_id == proj.id,
                SourceRow.state == RowState.TO_REVIEW.value,
                SourceRow.retired.is_(False),
                CandidateRow.score >= min_score,
            )
            .order_by(SourceRow.id)
        )
        scores = []
        for row, best in session.execute(top).all():
            concept = (best.concept_id, best.name, best.score)
            append_decision(session, row, Action.AUTO_APPROVE, reviewer, concept, Predicate.EXACT)
            scores.append(best.score)
    expected = sum(scores) / len(scores) if settings.calibrated and scores else None
    if not settings.calibrated:
        logger.warning(
            "%s: scores are similarities, not probabilities (no --combiner): the precision of "
            "the %d rows auto-approved at %g is unknown; review a sample",
            project,
            len(scores),
            min_score,
        )
    return AutoApproveReport(len(scores), min_score, settings.calibrated, expected)


@dataclass(frozen=True)
class ReviewedRow:
    """A row a reviewer mapped (approve or pick): its code, text, concept and predicate."""

    code: str
    text: str
    concept_id: str
    predicate: str | None


def reviewed_rows(session: Session, project_id: int) -> list[ReviewedRow]:
    """Every row whose current decision is a reviewer's approve or pick (not auto-approved,
    not retired), in row order: what the project learns from."""
    query = (
        select(SourceRow.code, SourceRow.text, DecisionRow.concept_id, DecisionRow.predicate)
        .join(DecisionRow, DecisionRow.id == SourceRow.decision_id)
        .where(
            SourceRow.project_id == project_id,
            SourceRow.state == RowState.APPROVED.value,
            SourceRow.retired.is_(False),
            DecisionRow.concept_id.is_not(None),
        )
        .order_by(SourceRow.id)
    )
    return [ReviewedRow(c, t, str(cid), p) for c, t, cid, p in session.execute(query).all()]


def learned_synonyms(session: Session, project_id: int) -> list[tuple[str, str]]:
    """``(concept_id, text)`` of every row a reviewer approved as an exact match
    (:func:`reviewed_rows`, not broad/narrow): the project's own domain synonyms, searched by
    every later run."""
    return [
        (r.concept_id, r.text)
        for r in reviewed_rows(session, project_id)
        if r.predicate == Predicate.EXACT.value
    ]
