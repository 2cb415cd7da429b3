"""The approved exact mappings as a ``concept_id<TAB>text`` file: ``termnorm map export
--format synonyms`` (``--synonyms`` of ``normalize`` and of another project reads it)."""

from __future__ import annotations

from pathlib import Path

from termnorm.io.tables import atomic_file
from termnorm.projects.decisions import learned_synonyms
from termnorm.projects.exports.rows import ExportJob

__all__ = ["write_synonyms"]


def write_synonyms(path: Path, job: ExportJob, options: None) -> int:
    """Write the project's learned synonyms to ``path`` (one ``concept_id<TAB>text`` line
    each, the text's spacing collapsed), atomically; return the lines written."""
    pairs = learned_synonyms(job.session, job.row.id)
    with atomic_file(path) as tmp, tmp.open("w", encoding="utf-8", newline="") as f:
        f.writelines(f"{cid}\t{' '.join(text.split())}\n" for cid, text in pairs)
    return len(pairs)
