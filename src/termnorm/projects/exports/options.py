"""The exporters' choices: one frozen options dataclass per export format that takes any,
import-free (``termnorm map export`` generates its flags from them while it registers)."""

# opt() returns a dataclasses.Field, as field() does
# ruff: noqa: RUF009

from __future__ import annotations

from dataclasses import dataclass

from termnorm.kg.fhir_systems import FhirVersion
from termnorm.options import opt

__all__ = ["DEFAULT_BASE_URI", "FhirOptions", "OmopOptions", "SssomOptions"]

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
