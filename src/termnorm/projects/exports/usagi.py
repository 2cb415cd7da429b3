"""OHDSI Usagi's mapping CSV (layout: :mod:`termnorm.projects.usagi`): ``termnorm map export
--format usagi``; ``termnorm map import-usagi`` reads it back.

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
"""

from __future__ import annotations

import csv
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from termnorm.io.tables import atomic_file
from termnorm.projects.concepts import AttributeLookup
from termnorm.projects.exports.rows import ExportJob, ExportRow, utc
from termnorm.projects.models import CandidateRow, DecisionRow
from termnorm.projects.omop_targets import omop_target
from termnorm.projects.states import Predicate, RowState
from termnorm.projects.usagi import (
    ADD_INFO,
    MAPPING_COLUMNS,
    SOURCE_COLUMNS,
    Equivalence,
    MappingStatus,
)

__all__ = ["write_usagi"]

_EQUIVALENCE_OF = {
    Predicate.EXACT: Equivalence.EQUAL,
    Predicate.BROAD: Equivalence.WIDER,
    Predicate.NARROW: Equivalence.NARROWER,
}


def _epoch_ms(value: datetime) -> int:
    return round(utc(value).timestamp() * 1000)


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


def _usagi_line(row: ExportRow, info: list[str], attributes: AttributeLookup) -> list[Any]:
    decision, top = row.decision, row.top
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


def write_usagi(path: Path, job: ExportJob, options: None) -> int:
    """Write the live rows of the project to ``path`` in Usagi's layout (see the module),
    atomically; returns the rows written. The concepts' attributes give each OMOP concept's
    ``domain_id`` (and refuse a concept that is not an OMOP one)."""
    rows, attributes = job.rows(), job.attributes
    info = sorted({c for row in rows for c in (row.context or {})})
    written = 0
    with atomic_file(path) as tmp, tmp.open("w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f)
        writer.writerow([*SOURCE_COLUMNS, *(ADD_INFO + c for c in info), *MAPPING_COLUMNS])
        for row in rows:
            writer.writerow(_usagi_line(row, info, attributes))
            written += 1
    return written
