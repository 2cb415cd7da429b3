"""ICD-9-CM procedures in several languages, from GNU Health's ``health_icd9procs`` → records.

Source: the module folder of the PyPI package ``gnuhealth-icd9procs`` (the built-in data,
path ``None``) or any folder in its layout: ``data/icd9procs.xml`` (one record per code:
``name`` = the code ``01.09``, ``description`` = its English text) and ``locale/<lang>.po``
(translations of the descriptions, see :mod:`termnorm.kg._tryton`).

* Concepts: codes ``ICD9P:01.09`` (the data holds the leaf codes, ``NN.N`` and ``NN.NN``) and
  the 18 chapters of ICD-9-CM Volume 3 (:data:`CHAPTERS`, ``ICD9P:01-05`` … ``ICD9P:87-99``,
  English titles only: the data has no chapter records); semantic type = the chapter title.
* Terms: the description in every selected language (option ``langs``, ISO 639-1, default
  en, es, zh), English preferred; untranslated entries are dropped and counted per language
  and reason (see :func:`termnorm.kg._tryton.read_translations`).
* Relations ``child is_a parent``: ``NN.NN`` → ``NN.N`` when that code is in the data, else
  the code → its chapter (by the code's first two digits).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
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
from termnorm.kg.options import Icd9ProcsOptions
from termnorm.kg.records import Concept, LoadReport, Relation

NAMESPACE = "ICD9P"
SOURCE = "ICD9PROCS"
DISTRIBUTION = "gnuhealth-icd9procs"
MODULE = "health_icd9procs"
MODEL = "gnuhealth.procedure"
CHAPTERS: tuple[tuple[int, int, str], ...] = (
    (0, 0, "Procedures and interventions, not elsewhere classified"),
    (1, 5, "Operations on the nervous system"),
    (6, 7, "Operations on the endocrine system"),
    (8, 16, "Operations on the eye"),
    (17, 17, "Other miscellaneous diagnostic and therapeutic procedures"),
    (18, 20, "Operations on the ear"),
    (21, 29, "Operations on the nose, mouth, and pharynx"),
    (30, 34, "Operations on the respiratory system"),
    (35, 39, "Operations on the cardiovascular system"),
    (40, 41, "Operations on the hemic and lymphatic system"),
    (42, 54, "Operations on the digestive system"),
    (55, 59, "Operations on the urinary system"),
    (60, 64, "Operations on the male genital organs"),
    (65, 71, "Operations on the female genital organs"),
    (72, 75, "Obstetrical procedures"),
    (76, 84, "Operations on the musculoskeletal system"),
    (85, 86, "Operations on the integumentary system"),
    (87, 99, "Miscellaneous diagnostic and therapeutic procedures"),
)
"""The chapters of the ICD-9-CM Volume 3 tabular list: (first category, last category, title)."""

_CODE = re.compile(r"^(\d\d)\.\d\d?$")


def chapter_id(category: int) -> str:
    """The concept ID of the chapter holding the two-digit ``category`` (``3 → ICD9P:01-05``)."""
    for first, last, _ in CHAPTERS:
        if first <= category <= last:
            return f"{NAMESPACE}:{_span(first, last)}"
    raise ValueError(f"no ICD-9-CM procedure chapter holds category {category:02d}")


def _span(first: int, last: int) -> str:
    """``01-05`` for a range, ``17`` for a one-category chapter."""
    return f"{first:02d}" if first == last else f"{first:02d}-{last:02d}"


def load_icd9procs(
    path: Path | None, report: LoadReport, options: Icd9ProcsOptions | None = None
) -> Iterator[Record]:
    """Yield the chapters and codes (each followed by its terms), then ``is_a`` edges."""
    options = options or Icd9ProcsOptions()
    folder, catalogues, langs = open_module(path, DISTRIBUTION, MODULE, options.langs, report)
    xml = folder / "data" / "icd9procs.xml"
    codes = _read_codes(xml, report)
    english = {MODEL: {r.record_id: r.require("description", xml) for r in codes.values()}}
    translated = translations(
        catalogues, langs, "description", english, set(english[MODEL]), report
    )
    titles = {chapter_id(first): title for first, _, title in CHAPTERS}
    for cid, title in titles.items():
        report.keep("concepts", "chapters")
        yield Concept(cid, title, semantic_types=(title,))
        names = {SOURCE_LANG: title} if SOURCE_LANG in langs else {}
        yield from language_terms(cid, names, SOURCE, report)
    edges = []
    for cid, record in codes.items():
        code = cid.split(":")[1]
        chapter = chapter_id(int(code[:2]))
        report.keep("concepts", "codes")
        name = english[MODEL][record.record_id]
        yield Concept(cid, name, semantic_types=(titles[chapter],))
        names = {
            lang: name if lang == SOURCE_LANG else translated[lang].get(record.record_id, "")
            for lang in langs
        }
        yield from language_terms(cid, names, SOURCE, report)
        above = f"{NAMESPACE}:{code[:4]}"
        edges.append(Relation(cid, "is_a", above if len(code) == 5 and above in codes else chapter))
    report.keep("relations", n=len(edges))
    yield from edges


def _read_codes(path: Path, report: LoadReport) -> dict[str, TrytonRecord]:
    """``concept ID → record`` of every code in the data file, in file order."""
    codes: dict[str, TrytonRecord] = {}
    for r in read_records(path, MODEL):
        report.read["codes"] += 1
        code = r.require("name", path)
        r.require("description", path)
        if not _CODE.match(code):
            raise InputFormatError(path, r.line, f"not an ICD-9-CM procedure code: {code!r}")
        if f"{NAMESPACE}:{code}" in codes:
            report.drop("code: repeated (first record kept)")
            continue
        codes[f"{NAMESPACE}:{code}"] = r
    return codes
