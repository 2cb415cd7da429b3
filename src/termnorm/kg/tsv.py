"""Plain dictionaries → records: ``concept_id<TAB>term[<TAB>lang]`` TSV/CSV, and BioSyn's ``ID||name``.

* **tsv**: one term per row; tab-separated, or comma-separated (with CSV quoting) when the
  file ends in ``.csv`` (option ``delimiter`` overrides). A first row that looks like a
  header (``concept_id``/``id``/``cui``/``code`` then ``term``/``name``/``string``/``str``/
  ``text``/``synonym``) is skipped. A third column, when present, is the language.
* **biosyn**: ``ID||name`` lines (BioSyn's dictionary); the ID part may be ``|``-joined, the
  first ID being the concept and the others its ``alt_ids``. Names are HTML-unescaped
  (BioSyn writes ``Alzheimer&apos;s``).

Rows of one concept need not be adjacent; its first term is its name (preferred). IDs with
no namespace get ``prefix`` (default ``LOCAL``, so ``D003920`` → ``LOCAL:D003920``; gold
labels compare by local part, see :func:`termnorm.kg.ids.id_key`). No relations.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from termnorm.errors import InputFormatError
from termnorm.kg._text import Record, decode_entities, decoded_lines, dedup_terms, iter_lines
from termnorm.kg.ids import namespaced
from termnorm.kg.options import TsvOptions
from termnorm.kg.records import Concept, LoadReport

_ID_HEADERS = {"concept_id", "id", "cui", "code", "conceptid"}
_TERM_HEADERS = {"term", "name", "string", "str", "text", "synonym"}


@dataclass
class _Entry:
    """Terms and alternative IDs gathered for one concept."""

    terms: list[tuple[str, str]] = field(default_factory=list)  # (text, lang)
    alt_ids: list[str] = field(default_factory=list)


def _is_header(row: list[str]) -> bool:
    """Does this first row name the columns rather than hold data?"""
    return (
        len(row) >= 2
        and row[0].strip().lower() in _ID_HEADERS
        and row[1].strip().lower() in _TERM_HEADERS
    )


def _tsv_rows(path: Path, delimiter: str, encoding: str) -> Iterator[tuple[int, list[str]]]:
    """``(line_number, columns)``; CSV files go through the csv module (quoting)."""
    if delimiter == ",":
        reader = csv.reader(decoded_lines(path, encoding))
        for row in reader:
            yield reader.line_num, row
    else:
        for number, line in iter_lines(path, encoding):
            yield number, line.split(delimiter)


def load_tsv(path: Path, report: LoadReport, options: TsvOptions | None = None) -> Iterator[Record]:
    """Yield concepts and terms from a ``concept_id<TAB>term[<TAB>lang]`` dictionary."""
    options = options or TsvOptions()
    delimiter = options.delimiter or ("," if path.suffix.lower() == ".csv" else "\t")
    delimiter = "\t" if delimiter in {"tab", "\\t"} else delimiter
    report.info["file"] = str(path)
    entries: dict[str, _Entry] = {}
    first = True
    for number, row in _tsv_rows(path, delimiter, options.encoding):
        if not any(c.strip() for c in row):
            continue
        if first and _is_header(row):
            first = False
            report.info["header"] = "skipped"
            continue
        first = False
        report.read["rows"] += 1
        if len(row) not in (2, 3) or not row[0].strip():
            raise InputFormatError(
                path,
                number,
                f"expected 'concept_id{_show(delimiter)}term[{_show(delimiter)}lang]', got {len(row)} column(s)",
            )
        lang = row[2].strip() if len(row) == 3 and row[2].strip() else options.lang
        cid = namespaced(options.prefix, row[0])
        entries.setdefault(cid, _Entry()).terms.append((row[1], lang))
    yield from _emit(entries, report, source=path.stem)


def load_biosyn(
    path: Path, report: LoadReport, options: TsvOptions | None = None
) -> Iterator[Record]:
    """Yield concepts and terms from a BioSyn ``ID||name`` dictionary."""
    options = options or TsvOptions()
    report.info["file"] = str(path)
    entries: dict[str, _Entry] = {}
    for number, line in iter_lines(path, options.encoding):
        if not line.strip():
            continue
        report.read["lines"] += 1
        ids_part, sep, name = line.partition("||")
        ids = [namespaced(options.prefix, x) for x in ids_part.split("|") if x.strip()]
        if not sep or not ids or "||" in name:
            raise InputFormatError(path, number, "expected 'ID||name' (IDs may be '|'-joined)")
        entry = entries.setdefault(ids[0], _Entry())
        entry.terms.append((decode_entities([name], report)[0], options.lang))
        entry.alt_ids += [a for a in ids[1:] if a not in entry.alt_ids]
    yield from _emit(entries, report, source=path.stem)


def _emit(entries: dict[str, _Entry], report: LoadReport, source: str) -> Iterator[Record]:
    """One concept per entry (its first non-empty term as name), then its terms."""
    for cid, entry in entries.items():
        terms = dedup_terms(cid, [(t, lang, source) for t, lang in entry.terms], report)
        if not terms:
            report.drop("concept: no term")
            continue
        report.keep("concepts")
        yield Concept(cid, terms[0].term, alt_ids=tuple(entry.alt_ids))
        yield from terms


def _show(delimiter: str) -> str:
    """A delimiter as printed in messages."""
    return "<TAB>" if delimiter == "\t" else delimiter
