"""The terminology formats ``termnorm kg build`` reads: one :class:`~termnorm.registry.Registry`,
import-free (loaders are import paths), so the CLI lists the formats and generates their flags
without loading pandas.

A format is a loader module (``load(path, report, options) -> Iterator[Record]``) plus one
:func:`FORMATS.register <termnorm.registry.Registry.register>` line below: its name, the
loader's import path, its options dataclass (:mod:`termnorm.kg.options`), a help line and two
facts, ``path`` (a :class:`PathRule`) and ``streams`` (its output is stream-safe, see
:mod:`termnorm.kg.stream`). A package outside termnorm adds one through the entry-point group
``termnorm.kg_formats``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from enum import Enum
from typing import Any

from termnorm.kg import options as o
from termnorm.registry import Registry

__all__ = ["FORMATS", "KGFormat", "Loader", "PathRule", "format_name"]

Loader = Callable[[Any, Any, Any], Iterator[Any]]
"""``load(path, report, options)``: the records (``termnorm.kg._text.Record``) of a source."""


class PathRule(str, Enum):
    """Whether a format reads a file: always, optionally (``None`` = built-in), or never."""

    REQUIRED = "required"
    OPTIONAL = "optional"
    BUILTIN_ONLY = "builtin-only"


FORMATS: Registry[Loader] = Registry("KG format", "--format", "termnorm.kg_formats")
"""Every KG format, by name, in the order ``--help`` lists them."""


def _add(
    name: str, loader: str, options: type, path: PathRule, help: str, streams: bool = False
) -> None:
    """Register a built-in format (``loader``: ``module:function`` under ``termnorm.kg``)."""
    FORMATS.register(
        name, f"termnorm.kg.{loader}", options=options, help=help, path=path, streams=streams
    )


REQ, OPT, BUILTIN = PathRule.REQUIRED, PathRule.OPTIONAL, PathRule.BUILTIN_ONLY
_add("umls", "umls:load_umls", o.UmlsOptions, REQ, "a UMLS META folder (MRCONSO.RRF, ...)", True)
_add("obo", "obo:load_obo", o.OboOptions, OPT, "an .obo ontology (built in: HPO's hp.obo)")
_add("hpo", "hpo:load_hpo", o.HpoOptions, OPT, "HPO with its disease annotations (built in)")
_add("icd10cm", "icd10cm:load_icd10cm", o.Icd10cmOptions, BUILTIN, "ICD-10-CM (built in)")
_add("icd10who", "icd10who:load_icd10who", o.Icd10WhoOptions, OPT, "WHO ICD-10 (GNU Health)")
_add("icd9procs", "icd9procs:load_icd9procs", o.Icd9ProcsOptions, OPT, "ICD-9-CM procedures")
_add("gnuhealth", "gnuhealth:load_gnuhealth", o.GnuHealthOptions, OPT, "GNU Health catalogues")
_add("medic", "medic:load_medic", o.MedicOptions, REQ, "CTD's MEDIC disease vocabulary")
_add("tsv", "tsv:load_tsv", o.TsvOptions, REQ, "a TSV/CSV dictionary")
_add("biosyn", "tsv:load_biosyn", o.TsvOptions, REQ, "a BioSyn dictionary (ID||name)")
_add("omop", "omop:load_omop", o.OmopOptions, REQ, "an Athena (OMOP) download", True)
_add("snomed", "snomed:load_snomed", o.SnomedOptions, REQ, "a SNOMED CT RF2 release", True)
_add("loinc", "loinc:load_loinc", o.LoincOptions, REQ, "LOINC's Loinc.csv", True)
_add("fhir", "fhir:load_fhir", o.FhirOptions, REQ, "FHIR CodeSystem JSON or NDJSON", True)


class KGFormat(str, Enum):
    """The names of the built-in formats (kept for code that names them; every face takes any
    name :data:`FORMATS` knows, a third-party format's too)."""

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
        """The built-in format named ``value`` (case-insensitive).

        Raises:
            UnknownNameError: an unknown name; the message lists the known ones.
        ValueError: a registered format that is not built in.
        """
        name = format_name(value)
        if name not in cls._value2member_map_:
            raise ValueError(f"KG format {name!r} is not built in: give its name as a string")
        return cls(name)


def format_name(value: str | Enum) -> str:
    """The registered format named ``value`` (case-insensitive, a :class:`KGFormat` member too).

    Raises:
        UnknownNameError: an unknown name; the message lists the known ones.
    """
    return FORMATS.resolve(str(getattr(value, "value", value)).strip().lower()).name
