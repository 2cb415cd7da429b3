"""ICD-10-CM from the ``simple-icd-10-cm`` package → records (built-in source, no file).

* Concepts ``ICD10CM:<code>`` for chapters (``ICD10CM:1`` … ``ICD10CM:22``, as the package
  names them), blocks (``ICD10CM:A00-A09``), categories and codes (``ICD10CM:I21.9``, with
  the dot), named by their description; semantic type = the chapter's description.
* Terms: the description (preferred) and the inclusion terms, deduplicated.
* Relations: ``child is_a parent`` along the package's tree.

A few categories share their code with a one-category block (``C7A``); they become one
concept whose parent is the block's parent, so no self-loop appears.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path
from types import ModuleType

from termnorm.kg._text import Record, concept_terms
from termnorm.kg.options import Icd10cmOptions
from termnorm.kg.records import Concept, LoadReport, Relation

NAMESPACE = "ICD10CM"


def _package() -> ModuleType:
    """Import ``simple_icd_10_cm`` (its import-time DeprecationWarning silenced)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        import simple_icd_10_cm

    return simple_icd_10_cm


def load_icd10cm(
    path: Path | None, report: LoadReport, options: Icd10cmOptions | None = None
) -> Iterator[Record]:
    """Yield ICD-10-CM concepts (each followed by its terms), then parent edges."""
    if path is not None:
        raise ValueError("icd10cm is built in (simple-icd-10-cm data); give no path or 'builtin'")
    options = options or Icd10cmOptions()
    cm = _package()
    report.info["package"] = f"simple-icd-10-cm {metadata.version('simple-icd-10-cm')}"
    codes = list(dict.fromkeys(cm.get_all_codes(with_dots=True)))
    report.read["codes"] += len(codes)
    chapters: dict[str, str] = {}
    edges: list[Relation] = []
    for code in codes:
        cid = f"{NAMESPACE}:{code}"
        name = cm.get_description(code)
        chapter = _chapter_of(cm, code)
        chapter_name = chapters.setdefault(chapter, cm.get_description(chapter))
        report.keep("concepts")
        yield Concept(cid, " ".join(name.split()), semantic_types=(chapter_name,))
        synonyms = cm.get_inclusion_term(code) if options.inclusion_terms else []
        yield from concept_terms(cid, name, synonyms, report, source="ICD10CM")
        parent = _parent_of(cm, code)
        if parent:
            edges.append(Relation(cid, "is_a", f"{NAMESPACE}:{parent}"))
    report.keep("relations", n=len(edges))
    yield from edges


def _parent_of(cm: ModuleType, code: str) -> str:
    """Parent code, skipping a same-named block (``C7A`` category → ``C7A`` block → chapter)."""
    parent: str = cm.get_parent(code)
    if parent == code:
        parent = cm.get_parent(code, prioritize_blocks=True)
    return parent


def _chapter_of(cm: ModuleType, code: str) -> str:
    """The chapter code (``"1"`` … ``"22"``) that contains ``code``."""
    if cm.is_chapter(code):
        return code
    ancestors: list[str] = cm.get_ancestors(code)
    return ancestors[-1]
