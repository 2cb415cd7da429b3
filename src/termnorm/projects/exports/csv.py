"""A plain CSV of every live row with its state, decision and top candidate:
``termnorm map export --format csv``."""

from __future__ import annotations

import csv
from pathlib import Path

from termnorm.io.tables import atomic_file
from termnorm.projects.exports.rows import ExportJob

__all__ = ["CSV_COLUMNS", "write_csv"]

CSV_COLUMNS = (
    "code", "text", "frequency", "state", "version", "concept_id", "concept_name", "predicate",
    "action", "reviewer", "decided_at", "confidence", "comment", "top_concept_id",
    "top_concept_name", "top_score", "map_error",
)  # fmt: skip


def write_csv(path: Path, job: ExportJob, options: None) -> int:
    """Write every live row of the project to ``path`` as CSV (:data:`CSV_COLUMNS`),
    atomically; return the rows written."""
    rows = job.rows()
    with atomic_file(path) as tmp, tmp.open("w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(CSV_COLUMNS)
        for r in rows:
            d, t = r.decision, r.top
            writer.writerow(
                [
                    r.code,
                    r.text,
                    "" if r.frequency is None else f"{r.frequency:g}",
                    r.state,
                    r.version,
                    d.concept_id if d else "",
                    (d.concept_name or "") if d else "",
                    (d.predicate or "") if d else "",
                    d.action if d else "",
                    d.reviewer if d else "",
                    d.created_at.isoformat() if d else "",
                    "" if d is None or d.confidence is None else f"{d.confidence:.6f}",
                    (d.comment or "") if d else "",
                    t.concept_id if t else "",
                    t.name if t else "",
                    f"{t.score:.6f}" if t else "",
                    r.map_error or "",
                ]
            )
    return len(rows)
