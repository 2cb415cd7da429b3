"""The tables of a mapping project (SQLAlchemy 2.x declarative models).

``project`` (its pipeline spec and project settings as JSON) → ``source_row`` (one per code: text, frequency, context,
state, version) → ``candidate`` (the row's top k, replaced as a whole when the row is
re-mapped) and ``decision`` (append-only: who did what to which row version, and which
decision it replaced). ``lease`` reserves a row for one reviewer until it expires.

A row's ``version`` grows whenever what a reviewer sees changes (its text, its candidates,
its decision): a decision names the version it was made against, and a stale one is refused.
The schema is created and upgraded by the Alembic revisions in ``migrations/versions``;
these models must agree with the newest one (a test compares them).
"""

from __future__ import annotations

import termnorm.projects._deps  # noqa: F401  (the projects extra, named when missing)

# isort: split
from datetime import datetime, timezone
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

__all__ = [
    "Base",
    "CandidateRow",
    "DecisionRow",
    "JsonReady",
    "LeaseRow",
    "ProjectRow",
    "ReviewerRow",
    "SourceRow",
    "utcnow",
]

_NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


def utcnow() -> datetime:
    """Now, timezone-aware UTC (what every timestamp column holds)."""
    return datetime.now(timezone.utc)


class JsonReady:
    """``to_dict`` of the room's report dataclasses: their fields, datetimes as ISO text."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form for ``--json``."""
        return {k: v.isoformat() if isinstance(v, datetime) else v for k, v in vars(self).items()}


class Base(DeclarativeBase):
    """The declarative base of the project tables."""

    metadata = MetaData(naming_convention=_NAMING)


class ProjectRow(Base):
    """One mapping project: its name, its search (``spec``: a
    :class:`~termnorm.search.spec.PipelineSpec`'s ``to_dict``), the settings that are not
    the search's (``settings``: ``k``) and its source record (JSON)."""

    __tablename__ = "project"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    settings: Mapped[dict[str, Any]] = mapped_column(JSON)
    spec: Mapped[dict[str, Any]] = mapped_column(JSON)
    source: Mapped[dict[str, Any]] = mapped_column(JSON)


class SourceRow(Base):
    """One code of the source list. ``state`` is a :class:`~termnorm.projects.states.RowState`;
    ``decision_id`` the decision that set it; ``retired`` when a newer list dropped the code."""

    __tablename__ = "source_row"
    __table_args__ = (
        UniqueConstraint("project_id", "code", name="uq_source_row_project_code"),
        Index("ix_source_row_project_state", "project_id", "state"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("project.id", ondelete="CASCADE"))
    code: Mapped[str] = mapped_column(String(400))
    text: Mapped[str] = mapped_column(Text)
    frequency: Mapped[float | None] = mapped_column(Float, nullable=True)
    context: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    version: Mapped[int] = mapped_column(Integer, default=1)
    state: Mapped[str] = mapped_column(String(20))
    retired: Mapped[bool] = mapped_column(Boolean, default=False)
    map_error: Mapped[str | None] = mapped_column(Text, nullable=True)
    decision_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class CandidateRow(Base):
    """One of a row's top-k concepts: rank, score and where the match came from."""

    __tablename__ = "candidate"
    __table_args__ = (UniqueConstraint("row_id", "rank", name="uq_candidate_row_rank"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    row_id: Mapped[int] = mapped_column(ForeignKey("source_row.id", ondelete="CASCADE"))
    rank: Mapped[int] = mapped_column(Integer)
    concept_id: Mapped[str] = mapped_column(String(200))
    name: Mapped[str] = mapped_column(Text)
    matched_text: Mapped[str | None] = mapped_column(Text, nullable=True)
    source: Mapped[str | None] = mapped_column(String(100), nullable=True)
    term_source: Mapped[str | None] = mapped_column(String(200), nullable=True)
    score: Mapped[float] = mapped_column(Float)


class DecisionRow(Base):
    """One review decision, never updated nor deleted: the audit trail."""

    __tablename__ = "decision"
    __table_args__ = (Index("ix_decision_row", "row_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("project.id", ondelete="CASCADE"))
    row_id: Mapped[int] = mapped_column(ForeignKey("source_row.id", ondelete="CASCADE"))
    row_version: Mapped[int] = mapped_column(Integer)
    reviewer: Mapped[str] = mapped_column(String(200))
    action: Mapped[str] = mapped_column(String(20))
    concept_id: Mapped[str | None] = mapped_column(String(200), nullable=True)
    concept_name: Mapped[str | None] = mapped_column(Text, nullable=True)
    predicate: Mapped[str | None] = mapped_column(String(10), nullable=True)
    confidence: Mapped[float | None] = mapped_column(Float, nullable=True)
    comment: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    replaces_decision_id: Mapped[int | None] = mapped_column(
        ForeignKey("decision.id"), nullable=True
    )


class LeaseRow(Base):
    """A row reserved for one reviewer until ``expires_at`` (the review page's queue)."""

    __tablename__ = "lease"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    row_id: Mapped[int] = mapped_column(
        ForeignKey("source_row.id", ondelete="CASCADE"), unique=True
    )
    reviewer: Mapped[str] = mapped_column(String(200))
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class ReviewerRow(Base):
    """A reviewer of one project: the name their decisions carry and the SHA-256 (hex) of
    the token that names them on the review page (the token itself is never stored)."""

    __tablename__ = "reviewer"
    __table_args__ = (UniqueConstraint("project_id", "name", name="uq_reviewer_project_name"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("project.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(200))
    token_sha256: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
