"""FHIR's names for termnorm's words: code-system URLs and concept-ID prefixes, the FHIR
versions (import-free: the CLI reads them while it registers its commands).

One table serves both directions: the ``fhir`` KG loader turns a CodeSystem's ``url`` into
the prefix of its concept IDs (``http://snomed.info/sct`` → ``SNOMEDCT:…``), and the FHIR
ConceptMap export turns a concept ID's prefix back into the ``group.target`` system. The
URLs are the ones HL7 Terminology (THO) lists for these code systems.
"""

from __future__ import annotations

from enum import Enum

__all__ = ["SYSTEMS", "FhirVersion", "prefix_of_system", "system_of_prefix"]

SYSTEMS: dict[str, str] = {
    "SNOMEDCT": "http://snomed.info/sct",
    "LOINC": "http://loinc.org",
    "RxNorm": "http://www.nlm.nih.gov/research/umls/rxnorm",
    "UCUM": "http://unitsofmeasure.org",
    "ICD10": "http://hl7.org/fhir/sid/icd-10",
    "ICD10CM": "http://hl7.org/fhir/sid/icd-10-cm",
    "ICD10PCS": "http://www.cms.gov/Medicare/Coding/ICD10",
    "ICD9CM": "http://hl7.org/fhir/sid/icd-9-cm",
    "ICD11": "http://id.who.int/icd/release/11/mms",
    "HP": "http://human-phenotype-ontology.org",
    "NCIT": "http://ncicb.nci.nih.gov/xml/owl/EVS/Thesaurus.owl",
    "ATC": "http://www.whocc.no/atc",
    "CPT": "http://www.ama-assn.org/go/cpt",
    "CVX": "http://hl7.org/fhir/sid/cvx",
    "NDC": "http://hl7.org/fhir/sid/ndc",
}
"""Concept-ID prefix → FHIR code-system URL."""
_PREFIXES = {url: prefix for prefix, url in SYSTEMS.items()}


class FhirVersion(str, Enum):
    """FHIR releases termnorm reads (``R4``, ``R4B``, ``R5``) or writes (``R4B``, ``R5``).
    R4 and R4B define CodeSystem and ConceptMap alike; ``fhir.resources`` checks R4 with its
    R4B models (it ships no R4 package)."""

    R4 = "R4"
    R4B = "R4B"
    R5 = "R5"

    @classmethod
    def _missing_(cls, value: object) -> FhirVersion | None:
        """Case-insensitive: ``r4b`` is ``R4B``."""
        for member in cls:
            if isinstance(value, str) and member.value == value.strip().upper():
                return member
        return None


def prefix_of_system(url: str) -> str | None:
    """The concept-ID prefix of the code system at ``url`` (``None`` for an unknown one; a
    trailing ``/`` and a ``|version`` are ignored)."""
    return _PREFIXES.get(url.partition("|")[0].rstrip("/"))


def system_of_prefix(prefix: str) -> str | None:
    """The FHIR code-system URL of concept-ID prefix ``prefix`` (``None`` for an unknown one)."""
    return SYSTEMS.get(prefix)
