""":func:`export`: resolve an export format by name, open the project, run its exporter."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

from termnorm.options import options_from_dict
from termnorm.projects.concepts import AttributeLookup
from termnorm.projects.exports.formats import EXPORTERS
from termnorm.projects.exports.rows import ExportJob
from termnorm.projects.models import JsonReady
from termnorm.projects.store import DEFAULT_BUSY_TIMEOUT, DatabaseLike, open_project

__all__ = ["ExportReport", "export"]


@dataclass(frozen=True)
class ExportReport(JsonReady):
    """What :func:`export` wrote: ``rows`` in ``format`` to ``out``."""

    format: str
    out: str
    rows: int


def export(
    project: str,
    format: str | Enum,
    out: str | Path,
    *,
    db: DatabaseLike = None,
    concepts: AttributeLookup | None = None,
    busy_timeout: float = DEFAULT_BUSY_TIMEOUT,
    **options: Any,
) -> ExportReport:
    """Write ``project``'s mappings to the file ``out`` in ``format``, a name in
    :data:`~termnorm.projects.exports.EXPORTERS` (an :class:`~termnorm.projects.ExportFormat`
    member too). ``options`` are the exporter's, by field name (``sssom``: ``subject_prefix``,
    ``base_uri``; ``omop``: ``vocabulary_id``; ``fhir``: ``fhir_version``, ``source_system``,
    ``base_uri``); ``None`` values are left out. ``concepts``: the concepts' attributes
    (default: read from the project's index, once, when an OMOP concept is to be written).

    Raises:
        UnknownNameError: an unknown format, listing the known ones.
        ValueError: ``out`` is a folder, or an option the format does not take.
    """
    entry = EXPORTERS.resolve(str(getattr(format, "value", format)))
    given = {name: value for name, value in options.items() if value is not None}
    where = f"export format {entry.name!r}"
    if entry.options is not None:
        chosen: Any = options_from_dict(entry.options, given, where)
    elif given:
        raise ValueError(f"{where} takes no options; got {', '.join(sorted(given))}")
    else:
        chosen = None
    path = Path(out)
    if path.is_dir():
        raise ValueError(f"--out {path} is a folder; give a file, e.g. {path / (project + '.tsv')}")
    write = entry.load()
    with open_project(project, db, busy_timeout=busy_timeout) as (_store, session, row):
        count = write(path, ExportJob(project, session, row, concepts), chosen)
    return ExportReport(entry.name, str(path), count)
