"""``termnorm map status``: where a project stands — rows by state, decisions, reviewers,
learned synonyms — and what auto-approving at a threshold would give.

At ``min_score`` P: how many rows still to review have a top candidate scoring at least P;
their *expected precision* when scores are calibrated probabilities (a learned combiner:
the mean of those probabilities, what a well-calibrated model promises), and the
*observed precision* among rows people already reviewed whose top candidate scored at least
P (the share where they approved that very candidate; ``None`` before any such review).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import and_, func, select
from sqlalchemy.orm import Session

from termnorm.errors import SourceChangedError
from termnorm.projects.decisions import learned_synonyms
from termnorm.projects.models import CandidateRow, DecisionRow, SourceRow
from termnorm.projects.settings import PipelineSettings, ProjectSource, check_min_score
from termnorm.projects.source import check_unchanged
from termnorm.projects.states import Action, RowState
from termnorm.projects.store import DEFAULT_BUSY_TIMEOUT, DatabaseLike, open_project
from termnorm.search.spec import PipelineSpec

__all__ = ["DEFAULT_MIN_SCORE", "AutoEstimate", "ProjectStatus", "pipeline_settings", "status"]

DEFAULT_MIN_SCORE = 0.9


@dataclass(frozen=True)
class AutoEstimate:
    """What auto-approving at ``min_score`` would do (see the module)."""

    min_score: float
    rows: int
    calibrated: bool
    expected_precision: float | None
    reviewed: int
    observed_precision: float | None


@dataclass
class ProjectStatus:
    """Counts of a project: live ``rows`` by ``states``, ``retired`` rows, ``decisions`` in
    the audit trail, ``reviewers``, ``synonyms`` learned, the ``auto`` estimate, and a note
    when the source file changed since it was read."""

    project: str
    db: str
    rows: int
    retired: int
    states: dict[str, int] = field(default_factory=dict)
    decisions: int = 0
    reviewers: list[str] = field(default_factory=list)
    synonyms: int = 0
    auto: AutoEstimate | None = None
    source_changed: str | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    spec: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form for ``--json``."""
        out = dict(self.__dict__)
        out["auto"] = None if self.auto is None else dict(self.auto.__dict__)
        return out


def _estimate(
    session: Session, project_id: int, min_score: float, calibrated: bool
) -> AutoEstimate:
    top = and_(CandidateRow.row_id == SourceRow.id, CandidateRow.rank == 1)
    live = (SourceRow.project_id == project_id, SourceRow.retired.is_(False))
    to_review = select(CandidateRow.score).join(SourceRow, top)
    to_review = to_review.where(*live, SourceRow.state == RowState.TO_REVIEW.value)
    above = [float(s) for s in session.scalars(to_review.where(CandidateRow.score >= min_score))]
    expected = sum(above) / len(above) if calibrated and above else None
    decided = [Action.APPROVE.value, Action.PICK.value, Action.NO_MATCH.value]
    top_reviewed = (
        select(func.count())
        .select_from(SourceRow)
        .join(DecisionRow, DecisionRow.id == SourceRow.decision_id)
        .join(CandidateRow, top)
        .where(*live, DecisionRow.action.in_(decided), CandidateRow.score >= min_score)
    )
    reviewed = int(session.scalar(top_reviewed) or 0)
    agreed_query = top_reviewed.where(
        DecisionRow.action.in_(decided[:2]), DecisionRow.concept_id == CandidateRow.concept_id
    )
    agreed = int(session.scalar(agreed_query) or 0)
    observed = agreed / reviewed if reviewed else None
    return AutoEstimate(min_score, len(above), calibrated, expected, reviewed, observed)


def status(
    project: str,
    *,
    db: DatabaseLike = None,
    min_score: float = DEFAULT_MIN_SCORE,
    busy_timeout: float = DEFAULT_BUSY_TIMEOUT,
) -> ProjectStatus:
    """The :class:`ProjectStatus` of ``project`` (reads only); ``min_score`` as
    :func:`~termnorm.projects.settings.check_min_score` accepts."""
    check_min_score(min_score)
    with open_project(project, db, busy_timeout=busy_timeout) as (store, session, proj):
        settings = PipelineSettings.from_row(proj)
        by_state = session.execute(
            select(SourceRow.state, SourceRow.retired, func.count())
            .where(SourceRow.project_id == proj.id)
            .group_by(SourceRow.state, SourceRow.retired)
        ).all()
        states = {s.value: 0 for s in RowState}
        retired = 0
        for state, is_retired, n in by_state:
            if is_retired:
                retired += int(n)
            else:
                states[str(state)] += int(n)
        decisions = int(
            session.scalar(select(func.count()).where(DecisionRow.project_id == proj.id)) or 0
        )
        reviewers = sorted(
            session.scalars(
                select(DecisionRow.reviewer).where(DecisionRow.project_id == proj.id).distinct()
            )
        )
        result = ProjectStatus(
            project,
            store.shown,
            sum(states.values()),
            retired,
            states,
            decisions,
            reviewers,
            len(learned_synonyms(session, proj.id)),
            _estimate(session, proj.id, min_score, settings.calibrated),
            settings={"k": settings.k},
            spec=settings.spec.to_dict(),
        )
        try:
            check_unchanged(project, ProjectSource.from_dict(proj.source))
        except SourceChangedError as changed:
            result.source_changed = str(changed)
    return result


def pipeline_settings(
    project: str, *, db: DatabaseLike = None, busy_timeout: float = DEFAULT_BUSY_TIMEOUT
) -> PipelineSpec:
    """The pipeline spec ``project`` maps its rows with (its index, synonym files, ...)."""
    with open_project(project, db, busy_timeout=busy_timeout) as (_store, _session, proj):
        return PipelineSettings.from_row(proj).spec
