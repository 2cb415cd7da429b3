"""``termnorm map export``: a project's decisions in the field's formats, one module each,
registered by name in :data:`EXPORTERS` (:mod:`~termnorm.projects.exports.formats`, import-free: a face lists the names and generates its
flags from the options dataclasses without importing SQLAlchemy).

* ``sssom``: SSSOM TSV (:mod:`~termnorm.projects.exports.sssom`).
* ``omop``: OMOP CDM ``source_to_concept_map`` CSV (:mod:`~termnorm.projects.exports.omop`).
* ``csv``: every live row with its state, decision and top candidate.
* ``synonyms``: the approved exact mappings as a ``concept_id<TAB>text`` file.
* ``usagi``: OHDSI Usagi's mapping CSV, which ``termnorm map import-usagi`` reads back.
* ``fhir``: a FHIR ConceptMap, R4B or R5 (:mod:`~termnorm.projects.exports.fhir`).

An exporter is ``write(path, job, options) -> rows written``: it reads the project through
:class:`~termnorm.projects.exports.rows.ExportJob`, writes ``path`` atomically (all or nothing)
and never writes a retired row. A new format is one module plus one
:meth:`EXPORTERS.register <termnorm.registry.Registry.register>` line (a package outside
termnorm: an entry point in the group ``termnorm.exports``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from termnorm._lazy import lazy_getattr
from termnorm.projects.exports.formats import DEFAULT_BASE_URI, EXPORTERS, Exporter

if TYPE_CHECKING:  # pragma: no cover
    from termnorm.projects.exports.omop import OMOP_COLUMNS
    from termnorm.projects.exports.rows import ExportJob
    from termnorm.projects.exports.run import ExportReport, export
    from termnorm.projects.exports.sssom import MANUAL, OMOP_ID_SLOT, THRESHOLD

__all__ = [
    "DEFAULT_BASE_URI",
    "EXPORTERS",
    "MANUAL",
    "OMOP_COLUMNS",
    "OMOP_ID_SLOT",
    "THRESHOLD",
    "ExportJob",
    "ExportReport",
    "Exporter",
    "export",
]

__getattr__ = lazy_getattr(
    __name__,
    {
        "MANUAL": "sssom",
        "OMOP_ID_SLOT": "sssom",
        "THRESHOLD": "sssom",
        "OMOP_COLUMNS": "omop",
        "ExportJob": "rows",
        "ExportReport": "run",
        "export": "run",
    },
)
