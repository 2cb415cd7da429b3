"""What every exporter reads: :class:`ExportJob` (the project, its open session, settings and
concepts' attributes) and its live rows (:class:`ExportRow`), plus the small formatting rules
several formats share."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from functools import cached_property
from typing import Any

from sqlalchemy.orm import Session

from termnorm.projects.concepts import AttributeLookup, project_attributes
from termnorm.projects.models import CandidateRow, DecisionRow, ProjectRow
from termnorm.projects.rows import live_rows_select
from termnorm.projects.settings import PipelineSettings
from termnorm.projects.states import RowState

__all__ = ["ExportJob", "ExportRow", "base_uri", "is_mapped", "iso_date", "split_id", "utc"]

_APPROVED = (RowState.APPROVED.value, RowState.AUTO_APPROVED.value)


@dataclass(frozen=True)
class ExportRow:
    """One live row of a project with its current decision and top candidate."""

    code: str
    text: str
    frequency: float | None
    state: str
    version: int
    map_error: str | None
    context: dict[str, Any] | None
    decision: DecisionRow | None
    top: CandidateRow | None


@dataclass
class ExportJob:
    """One export's inputs: the project's ``name``, an open ``session``, its ``row``, and the
    concepts' attributes given (``None``: read from the project's index on first use)."""

    name: str
    session: Session
    row: ProjectRow
    concepts: AttributeLookup | None = None

    @cached_property
    def settings(self) -> PipelineSettings:
        """The project's stored pipeline settings."""
        return PipelineSettings.from_row(self.row)

    @cached_property
    def attributes(self) -> AttributeLookup:
        """The concepts' attributes (the index is read once, when an exporter asks)."""
        return self.concepts or project_attributes(self.settings.spec)

    def rows(self) -> list[ExportRow]:
        """Every live row with its current decision and top candidate, in row order."""
        select = live_rows_select(self.row.id)
        return [
            ExportRow(
                r.code, r.text, r.frequency, r.state, r.version, r.map_error, r.context, d, top
            )
            for r, d, top in self.session.execute(select).yield_per(2000)
        ]


def is_mapped(r: ExportRow) -> bool:
    """Whether ``r`` is an approved (or auto-approved) row with a concept."""
    return r.state in _APPROVED and r.decision is not None and bool(r.decision.concept_id)


def utc(value: datetime) -> datetime:
    """``value`` in UTC (a naive time is read as UTC)."""
    aware = value if value.tzinfo is not None else value.replace(tzinfo=timezone.utc)
    return aware.astimezone(timezone.utc)


def iso_date(value: datetime) -> str:
    """``value``'s UTC date, ``YYYY-MM-DD``."""
    return utc(value).date().isoformat()


def split_id(concept_id: str) -> tuple[str, str]:
    """``(namespace, local part)`` of a concept ID (``CONCEPT`` when it has no namespace)."""
    namespace, sep, local = concept_id.partition(":")
    return (namespace, local) if sep and namespace else ("CONCEPT", concept_id)


def base_uri(uri: str) -> str:
    """``uri`` ending in ``/`` or ``#`` (a ``/`` added when it ends in neither)."""
    return uri if uri.endswith(("/", "#")) else uri + "/"
