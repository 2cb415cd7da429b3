"""OMOP CDM ``source_to_concept_map`` CSV: ``termnorm map export --format omop``.

Its columns, in order: approved rows with their concept's integer ID and the concept's
``vocabulary_id`` as the project's index holds it, "no match" rows with concept 0 (vocabulary
``None``), as OMOP marks unmapped codes. A concept that is not an OMOP concept (its ID's local
part not an integer, or no ``vocabulary_id`` in the index) is refused naming it
(:mod:`termnorm.projects.omop_targets`).
"""

from __future__ import annotations

import csv
from pathlib import Path

from termnorm.io.tables import atomic_file
from termnorm.projects.exports.formats import OmopOptions
from termnorm.projects.exports.rows import ExportJob, is_mapped, iso_date
from termnorm.projects.omop_targets import OmopTarget, check_integer, omop_target
from termnorm.projects.states import RowState

__all__ = ["OMOP_COLUMNS", "write_omop"]

OMOP_COLUMNS = (
    "source_code", "source_concept_id", "source_vocabulary_id", "source_code_description",
    "target_concept_id", "target_vocabulary_id", "valid_start_date", "valid_end_date",
    "invalid_reason",
)  # fmt: skip
_FAR_FUTURE = "2099-12-31"


def write_omop(path: Path, job: ExportJob, options: OmopOptions) -> int:
    """Write the project's approved and "no match" rows to ``path`` as OMOP's
    ``source_to_concept_map`` CSV (module doc), atomically; return the rows written."""
    rows, attributes = job.rows(), job.attributes
    vocabulary = (options.vocabulary_id or job.name)[:20]
    for r in rows:  # every ID an integer before the index is read
        if is_mapped(r):
            check_integer(str(r.decision.concept_id), r.code)  # type: ignore[union-attr]
    written, targets = 0, dict[str, OmopTarget]()
    with atomic_file(path) as tmp, tmp.open("w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(OMOP_COLUMNS)
        for r in rows:
            d = r.decision
            if r.state == RowState.NO_MATCH.value and d is not None:
                target, target_vocabulary = 0, "None"
            elif is_mapped(r) and d and d.concept_id:
                if d.concept_id not in targets:
                    targets[d.concept_id] = omop_target(d.concept_id, r.code, attributes)
                found = targets[d.concept_id]
                target, target_vocabulary = found.concept_id, found.vocabulary_id
            else:
                continue
            writer.writerow(
                [
                    r.code,
                    0,
                    vocabulary,
                    r.text,
                    target,
                    target_vocabulary,
                    iso_date(d.created_at),
                    _FAR_FUTURE,
                    "",
                ]
            )
            written += 1
    return written
