"""The terminology formats ``termnorm kg build`` reads (import-free, for the CLI's help)."""

from __future__ import annotations

from enum import Enum

__all__ = ["KGFormat"]


class KGFormat(str, Enum):
    """Terminology source formats that ``termnorm kg build`` reads."""

    UMLS = "umls"
    OBO = "obo"
    HPO = "hpo"
    ICD10CM = "icd10cm"
    ICD10WHO = "icd10who"
    ICD9PROCS = "icd9procs"
    GNUHEALTH = "gnuhealth"
    MEDIC = "medic"
    TSV = "tsv"
    BIOSYN = "biosyn"
    OMOP = "omop"
    SNOMED = "snomed"
    LOINC = "loinc"
    FHIR = "fhir"

    @classmethod
    def parse(cls, value: str | KGFormat) -> KGFormat:
        """The format named ``value`` (case-insensitive); unknown → error listing the known."""
        try:
            return cls(str(getattr(value, "value", value)).strip().lower())
        except ValueError:
            known = ", ".join(f.value for f in cls)
            raise ValueError(f"unknown KG format {value!r}; known formats: {known}") from None
