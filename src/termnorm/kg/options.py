"""The loaders' choices: one frozen options dataclass per KG format, import-free.

Each field is an :func:`termnorm.options.opt`: its default, its help text and, where the
field's name is not the flag, the flag of ``termnorm kg build`` (``langs`` is ``--lang``, and
several formats' ``langs`` share it). ``kg build`` generates its source flags from these
classes (:mod:`termnorm.cli._source_flags`), ``--add FORMAT:PATH#key=value`` and
:class:`termnorm.kg.build.SourceSpec` take the field names, and a KG card records the options
given. Each format's entry in :data:`termnorm.kg.formats.FORMATS` names its class. Nothing here
imports pandas: the CLI reads these classes while it registers its commands.
"""

# opt() returns a dataclasses.Field, as field() does
# ruff: noqa: RUF009

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from termnorm.kg.fhir_systems import FhirVersion
from termnorm.kg.obo_parser import SCOPES
from termnorm.options import opt

__all__ = [
    "DEFAULT_PREFIX",
    "GB_ENGLISH",
    "ICD9PROCS_LANGS",
    "ICD10WHO_LANGS",
    "OMOP_ENGLISH",
    "US_ENGLISH",
    "FhirOptions",
    "GnuHealthOptions",
    "HpoOptions",
    "Icd9ProcsOptions",
    "Icd10WhoOptions",
    "Icd10cmOptions",
    "LoincOptions",
    "MedicOptions",
    "OboOptions",
    "OmopOptions",
    "SnomedOptions",
    "TsvOptions",
    "UmlsOptions",
]

ICD10WHO_LANGS = ("en", "es", "de", "fr", "zh")
"""The WHO ICD-10 loader's default languages."""
ICD9PROCS_LANGS = ("en", "es", "zh")
"""The ICD-9-CM procedures loader's default languages."""
DEFAULT_PREFIX = "LOCAL"
"""The namespace a TSV/CSV or BioSyn dictionary gives IDs that have none."""
OMOP_ENGLISH = "4180186"
"""``language_concept_id`` of English in OMOP."""
US_ENGLISH = "900000000000509007"
"""SNOMED CT's US English language reference set."""
GB_ENGLISH = "900000000000508004"
"""SNOMED CT's GB English language reference set."""


@dataclass(frozen=True)
class UmlsOptions:
    """Filters and choices of the UMLS loader."""

    langs: tuple[str, ...] = opt(
        ("ENG",), "Languages to keep (LAT codes such as ENG, or en).", "--lang"
    )
    sabs: tuple[str, ...] = opt((), "Source vocabularies (SAB) to keep; empty keeps all.", "--sab")
    keep_suppressed: bool = opt(False, "Keep suppressible rows (SUPPRESS O, E, Y).")
    one_direction: bool = opt(False, "Keep one row of each inverse relation pair.")
    skip_rels: tuple[str, ...] = opt(("XR",), "REL values dropped (XR = not related).")
    codes_as_alt_ids: bool = opt(True, "Record each kept row's SAB:CODE in alt_ids.")


@dataclass(frozen=True)
class OboOptions:
    """Choices of the OBO loader."""

    synonym_scopes: tuple[str, ...] = opt(
        ("EXACT", "RELATED"), f"Synonym scopes kept as terms ({', '.join(SCOPES)})."
    )
    type_root: str = opt(
        "auto", "Semantic types = children of this term (auto: HP:0000118 when present)."
    )
    xrefs: bool = opt(True, "Record xref: IDs in alt_ids (alt_id: values always are).")
    lang: str = opt("en", "Language code given to every term.", "--default-language")


@dataclass(frozen=True)
class HpoOptions(OboOptions):
    """The OBO options plus the annotation choices."""

    with_annotations: bool = opt(
        True,
        "Add OMIM/ORPHA diseases and has_phenotype edges.",
        "--with-annotations/--no-annotations",
    )
    annotations: Path | None = opt(None, "Annotation file (default: phenotype.hpoa by hp.obo).")
    databases: tuple[str, ...] = opt(("OMIM", "ORPHA"), "Disease databases kept (+DECIPHER).")
    used_only: bool = opt(
        False, "Keep only HP terms some selected disease has, plus their is_a ancestors."
    )


@dataclass(frozen=True)
class Icd10cmOptions:
    """Choices of the ICD-10-CM loader."""

    inclusion_terms: bool = opt(True, "Add inclusion terms as synonyms.")


@dataclass(frozen=True)
class Icd10WhoOptions:
    """Choices of the WHO ICD-10 loader."""

    langs: tuple[str, ...] = opt(
        ICD10WHO_LANGS,
        "Languages whose names become terms (ISO 639-1: en, es, de, fr, zh, ja, it, pt, ...).",
        "--lang",
    )
    include_inactive: bool = opt(
        False, "Keep codes the data marks inactive (replaced codes, place-of-occurrence digits)."
    )


@dataclass(frozen=True)
class Icd9ProcsOptions:
    """Choices of the ICD-9-CM procedures loader."""

    langs: tuple[str, ...] = opt(
        ICD9PROCS_LANGS,
        "Languages whose descriptions become terms (ISO 639-1: en, es, zh, ...).",
        "--lang",
    )


@dataclass(frozen=True)
class GnuHealthOptions:
    """Choices of the GNU Health catalogues loader."""

    packages: tuple[str, ...] = opt(
        ("all",),
        "GNU Health packages to read: all, or some of icd10, icd11, icd10pcs, icd9procs, icpm, "
        "who-essential-medicines, lab, disability, genetics, health.",
        "--package",
    )
    langs: tuple[str, ...] = opt(
        (),
        "Languages whose names become terms (ISO 639-1: en, es, fr, ...); empty = all.",
        "--lang",
    )


@dataclass(frozen=True)
class MedicOptions:
    """Choices of the MEDIC loader."""

    synonyms: bool = opt(True, "Add synonyms (off: names only).")


@dataclass(frozen=True)
class TsvOptions:
    """Choices of the TSV/CSV and BioSyn dictionary loaders."""

    prefix: str = opt(DEFAULT_PREFIX, "Namespace given to IDs that have none.")
    delimiter: str = opt("", "Column separator (default: ',' for .csv, else tab).")
    lang: str = opt("en", "Language of rows without a language column.", "--default-language")
    encoding: str = opt("utf-8", "Text encoding of the file (e.g. latin-1, cp1252).")


@dataclass(frozen=True)
class OmopOptions:
    """Choices of the OMOP (Athena download) loader."""

    vocabulary: tuple[str, ...] = opt(
        (), "Vocabularies kept (vocabulary_id, e.g. SNOMED,LOINC); empty keeps all."
    )
    domain: tuple[str, ...] = opt(
        (), "Domains kept (domain_id, e.g. Condition,Measurement); empty keeps all."
    )
    concept_class: tuple[str, ...] = opt(
        (), "Concept classes kept (e.g. 'Clinical Finding'); empty keeps all."
    )
    standard_only: bool = opt(
        False, "Keep standard concepts only; the others' names reach them through 'Maps to'."
    )
    include_invalid: bool = opt(
        False, "Keep invalid and deprecated concepts (invalid_reason set, valid_end_date past)."
    )
    maps_to_synonyms: bool = opt(
        True, "Add the names of concepts that 'Maps to' a kept concept as its synonyms."
    )
    synonym_languages: tuple[str, ...] = opt(
        (OMOP_ENGLISH,), "language_concept_id of CONCEPT_SYNONYM rows kept (4180186 = English)."
    )
    as_of: str = opt("", "Date that valid_end_date is checked against (YYYYMMDD; default today).")


@dataclass(frozen=True)
class SnomedOptions:
    """Choices of the SNOMED CT RF2 loader."""

    language_refset: str = opt(
        US_ENGLISH,
        "Language reference set deciding the preferred term (900000000000509007 US English, "
        "900000000000508004 GB English).",
    )


@dataclass(frozen=True)
class LoincOptions:
    """Choices of the Loinc.csv loader."""

    include_status: tuple[str, ...] = opt(
        (), "LOINC statuses kept besides ACTIVE (TRIAL, DISCOURAGED, DEPRECATED)."
    )


@dataclass(frozen=True)
class FhirOptions:
    """Choices of the FHIR CodeSystem loader."""

    prefix: str = opt(
        "",
        "Namespace of the concept IDs of a CodeSystem whose url is not a known system "
        "(SNOMED CT, LOINC, ICD-10, ... are named by their url).",
    )
    fhir_version: FhirVersion | None = opt(
        None,
        "FHIR release of the CodeSystems: R4, R4B or R5 (default: from meta.profile, else R5 "
        "when an R5-only field is present, else R4).",
    )
    include_inactive: bool = opt(
        False, "Keep concepts whose status property is retired or inactive property is true."
    )
    default_language: str = opt(
        "en", "Language of displays and designations when neither they nor the CodeSystem name one."
    )
    validate: bool = opt(
        True,
        "Check each CodeSystem with the fhir.resources model of its release (most of the load "
        "time of a large one); false reads the JSON as it is.",
    )
