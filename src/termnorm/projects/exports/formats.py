"""The export formats: one :class:`~termnorm.registry.Registry`, import-free (exporters are
import paths), so ``termnorm map export`` lists them and generates its flags cheaply."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from termnorm.projects.exports.options import FhirOptions, OmopOptions, SssomOptions
from termnorm.registry import Registry

if TYPE_CHECKING:  # pragma: no cover
    from termnorm.projects.exports.rows import ExportJob

__all__ = ["EXPORTERS", "Exporter"]

Exporter = Callable[[Path, "ExportJob", Any], int]
"""``write(path, job, options)``: write the project to ``path``; return the rows written."""

EXPORTERS: Registry[Exporter] = Registry("export format", "--format", "termnorm.exports")
"""Every export format, by name, in the order ``--help`` lists them."""

_P = "termnorm.projects.exports."
EXPORTERS.register("sssom", _P + "sssom:write_sssom", options=SssomOptions, help="SSSOM TSV")
EXPORTERS.register("omop", _P + "omop:write_omop", options=OmopOptions, help="OMOP source_to_concept_map")  # fmt: skip
EXPORTERS.register("csv", _P + "csv:write_csv", help="every row with its state and decision")
EXPORTERS.register("synonyms", _P + "synonyms:write_synonyms", help="concept_id<TAB>text")
EXPORTERS.register("usagi", _P + "usagi:write_usagi", help="OHDSI Usagi's mapping CSV")
EXPORTERS.register("fhir", _P + "fhir:write_conceptmap", options=FhirOptions, help="a FHIR ConceptMap")  # fmt: skip
