"""OHDSI Usagi's mapping CSV: its layout, and ``termnorm map export --format usagi``, which
writes a project in it (``termnorm map import-usagi`` reads it back).

**Layout** (what Usagi's ``WriteCodeMappingsToFile`` writes and ``ReadCodeMappingsFromFile``
reads): a header, then one row per source code and target concept — ``sourceCode``,
``sourceName``, ``sourceFrequency``, ``sourceAutoAssignedConceptIds``, ``ADD_INFO:<name>``
columns, ``matchScore``, ``mappingStatus``, ``equivalence``, ``statusSetBy``,
``statusSetOn`` (epoch milliseconds), ``conceptId`` (OMOP's integer; 0 = none),
``conceptName``, ``domainId``, ``mappingType``, ``comment``, ``createdBy``, ``createdOn``,
``assignedReviewer``. A project holds one concept per code, so it writes one row per code.

**Export** (row state → ``mappingStatus``): approved → ``APPROVED`` (``equivalence`` from
the predicate: exact ``EQUAL``, broad ``WIDER``, narrow ``NARROWER``); auto-approved →
``AUTO_MAPPED``; no match → ``APPROVED`` with ``conceptId`` 0 and ``UNMATCHED``; flagged →
``FLAGGED`` (the concept the flag named, if any); to review → ``UNCHECKED`` with the top
candidate as the suggestion; to map → ``UNCHECKED`` with ``conceptId`` 0. ``statusSetBy`` /
``statusSetOn`` are the decision's reviewer and time; ``matchScore`` the decision's
confidence, else the top candidate's score; the context columns become ``ADD_INFO:``
columns; a missing frequency is written 0 (Usagi reads an integer). Retired rows are not
written. The concept IDs come from an index built from OMOP vocabularies
(:mod:`termnorm.projects.omop_targets`).

The way back, :func:`~termnorm.projects.usagi_import.import_usagi`, is
:mod:`termnorm.projects.usagi_import`.
"""

from __future__ import annotations

import csv
from collections.abc import Mapping
from datetime import datetime, timezone
from enum import Enum
from pathlib import Path
from typing import Any

from sqlalchemy.orm import Session

from termnorm.io.tables import atomic_file
from termnorm.projects.concepts import AttributeLookup
from termnorm.projects.models import CandidateRow, DecisionRow, SourceRow
from termnorm.projects.omop_targets import omop_target
from termnorm.projects.rows import live_rows_select
from termnorm.projects.states import Predicate, RowState

__all__ = [
    "ADD_INFO",
    "PREDICATE_OF",
    "USAGI_COLUMNS",
    "Equivalence",
    "MappingStatus",
    "write_usagi",
]

ADD_INFO = "ADD_INFO:"
"""Prefix of Usagi's additional-information columns (a project's context columns)."""
SOURCE_COLUMNS = ("sourceCode", "sourceName", "sourceFrequency", "sourceAutoAssignedConceptIds")
MAPPING_COLUMNS = (
    "matchScore", "mappingStatus", "equivalence", "statusSetBy", "statusSetOn", "conceptId",
    "conceptName", "domainId", "mappingType", "comment", "createdBy", "createdOn",
    "assignedReviewer",
)  # fmt: skip
USAGI_COLUMNS = (*SOURCE_COLUMNS, *MAPPING_COLUMNS)
"""Usagi's columns, in its order (the ``ADD_INFO:`` columns go between the two groups)."""


class MappingStatus(str, Enum):
    """Usagi's ``mappingStatus``."""

    APPROVED = "APPROVED"
    UNCHECKED = "UNCHECKED"
    AUTO_MAPPED = "AUTO_MAPPED"
    AUTO_MAPPED_TO_1 = "AUTO_MAPPED_TO_1"
    INVALID_TARGET = "INVALID_TARGET"
    FLAGGED = "FLAGGED"
    IGNORED = "IGNORED"


class Equivalence(str, Enum):
    """Usagi's ``equivalence`` (FHIR's concept-map equivalence, as Usagi names it)."""

    EQUAL = "EQUAL"
    EQUIVALENT = "EQUIVALENT"
    WIDER = "WIDER"
    NARROWER = "NARROWER"
    INEXACT = "INEXACT"
    UNMATCHED = "UNMATCHED"
    UNREVIEWED = "UNREVIEWED"


_EQUIVALENCE_OF = {
    Predicate.EXACT: Equivalence.EQUAL,
    Predicate.BROAD: Equivalence.WIDER,
    Predicate.NARROW: Equivalence.NARROWER,
}
PREDICATE_OF = {
    Equivalence.EQUAL: Predicate.EXACT,
    Equivalence.EQUIVALENT: Predicate.EXACT,
    Equivalence.UNREVIEWED: Predicate.EXACT,
    Equivalence.WIDER: Predicate.BROAD,
    Equivalence.NARROWER: Predicate.NARROW,
}


def _epoch_ms(value: datetime) -> int:
    aware = value if value.tzinfo is not None else value.replace(tzinfo=timezone.utc)
    return round(aware.timestamp() * 1000)


def _frequency(value: float | None) -> int:
    return 0 if value is None else round(value)


def _status(state: str, decision: DecisionRow | None) -> tuple[MappingStatus, Equivalence]:
    """The ``mappingStatus`` and ``equivalence`` of a row in ``state``."""
    predicate = Predicate(decision.predicate) if decision and decision.predicate else None
    if state == RowState.APPROVED.value:
        return MappingStatus.APPROVED, _EQUIVALENCE_OF[predicate or Predicate.EXACT]
    if state == RowState.AUTO_APPROVED.value:
        return MappingStatus.AUTO_MAPPED, _EQUIVALENCE_OF[predicate or Predicate.EXACT]
    if state == RowState.NO_MATCH.value:
        return MappingStatus.APPROVED, Equivalence.UNMATCHED
    if state == RowState.FLAGGED.value:
        return MappingStatus.FLAGGED, Equivalence.UNREVIEWED
    return MappingStatus.UNCHECKED, Equivalence.UNREVIEWED


def _rows(session: Session, project_id: int) -> list[Any]:
    """Every live row with its current decision and top candidate, in row order."""
    return [tuple(found) for found in session.execute(live_rows_select(project_id)).all()]


def _target(
    state: str, decision: DecisionRow | None, top: CandidateRow | None
) -> tuple[str, str] | None:
    """``(concept_id, name)`` a row's Usagi line names: the decision's concept, or the top
    candidate of a row still to review; ``None`` for none."""
    if decision is not None and decision.concept_id and state != RowState.NO_MATCH.value:
        return decision.concept_id, decision.concept_name or ""
    if state == RowState.TO_REVIEW.value and top is not None:
        return top.concept_id, top.name
    return None


def _usagi_line(
    row: SourceRow,
    decision: DecisionRow | None,
    top: CandidateRow | None,
    info: list[str],
    attributes: AttributeLookup,
) -> list[Any]:
    status, equivalence = _status(row.state, decision)
    decided = decision is not None and status is not MappingStatus.UNCHECKED
    target = _target(row.state, decision, top)
    concept_id, name, domain = 0, "", ""
    if target is not None:
        found = omop_target(target[0], row.code, attributes)
        concept_id, name, domain = found.concept_id, target[1], found.domain_id
    if decided and decision is not None and decision.confidence is not None:
        score = decision.confidence
    else:
        score = top.score if top is not None else 0.0
    context: Mapping[str, Any] = row.context or {}
    by = decision.reviewer if decided and decision is not None else ""
    on = _epoch_ms(decision.created_at) if decided and decision is not None else 0
    return [
        row.code,
        row.text,
        _frequency(row.frequency),
        "",
        *("" if context.get(c) is None else str(context.get(c)) for c in info),
        f"{score:.6f}",
        status.value,
        equivalence.value,
        by,
        on,
        concept_id,
        name,
        domain,
        "MAPS_TO",
        (decision.comment or "") if decided and decision is not None else "",
        by if concept_id else "",
        on if concept_id else 0,
        "",
    ]


def write_usagi(path: Path, session: Session, project_id: int, attributes: AttributeLookup) -> int:
    """Write the live rows of the project to ``path`` in Usagi's layout (see the module),
    atomically; returns the rows written. ``attributes`` gives each OMOP concept's
    ``domain_id`` (and refuses a concept that is not an OMOP one)."""
    rows = list(_rows(session, project_id))
    info = sorted({c for row, _d, _t in rows for c in (row.context or {})})
    written = 0
    with atomic_file(path) as tmp, tmp.open("w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f)
        writer.writerow([*SOURCE_COLUMNS, *(ADD_INFO + c for c in info), *MAPPING_COLUMNS])
        for row, decision, top in rows:
            writer.writerow(_usagi_line(row, decision, top, info, attributes))
            written += 1
    return written
