"""The export formats: one :class:`~termnorm.registry.Registry`, :data:`EXPORTERS`, and the
options dataclass of each format that takes any. Import-free (exporters are import paths), so
``termnorm map export`` lists the formats and generates its flags cheaply."""

# opt() returns a dataclasses.Field, as field() does
# ruff: noqa: RUF009

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from termnorm.kg.fhir_systems import FhirVersion
from termnorm.options import opt
from termnorm.registry import Registry

if TYPE_CHECKING:  # pragma: no cover
    from termnorm.projects.exports.rows import ExportJob

__all__ = [
    "DEFAULT_BASE_URI",
    "EXPORTERS",
    "Exporter",
    "FhirOptions",
    "OmopOptions",
    "SssomOptions",
]

DEFAULT_BASE_URI = "https://w3id.org/termnorm/projects/"
_BASE_URI_HELP = "URI base of the codes and the mapping set."


@dataclass(frozen=True)
class SssomOptions:
    """Choices of the SSSOM export."""

    subject_prefix: str | None = opt(
        None, "CURIE prefix of the source codes (default: the project's name)."
    )
    base_uri: str = opt(DEFAULT_BASE_URI, _BASE_URI_HELP)


@dataclass(frozen=True)
class OmopOptions:
    """Choices of the OMOP ``source_to_concept_map`` export."""

    vocabulary_id: str | None = opt(
        None, "source_vocabulary_id (default: the project's name, at most 20 characters)."
    )


@dataclass(frozen=True)
class FhirOptions:
    """Choices of the FHIR ConceptMap export."""

    fhir_version: FhirVersion = opt(FhirVersion.R4B, "The ConceptMap's FHIR release, R4B or R5.")
    source_system: str | None = opt(
        None, "Code-system URL of the source codes (default: urn:termnorm:project:PROJECT)."
    )
    base_uri: str = opt(DEFAULT_BASE_URI, _BASE_URI_HELP)


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
