"""LOINC's ``Loinc.csv`` → records: ``termnorm kg build --format loinc``.

The path is ``Loinc.csv`` itself or the release folder holding ``LoincTable/Loinc.csv``. The
file is comma CSV with quoting (a value may hold commas, quotes and line breaks) and a
header; columns are found by name (any letter case), so the LOINC 2.x column order does not
matter. It is read row by row (one row in memory; the set of LOINC numbers seen refuses
repeats), and a malformed row is an error naming ``FILE:LINE``.

* **Concepts** ``LOINC:<LOINC_NUM>``; semantic type = ``CLASS`` (``CHEM``, ``HEM/BC``);
  attributes: the six axes ``component``, ``property``, ``time_aspect``, ``system``,
  ``scale_type``, ``method_type`` (always present: an empty method means "methodless"),
  ``class``, ``class_type`` (``Laboratory``, ``Clinical``, ``Claims attachments``,
  ``Surveys``, from ``CLASSTYPE``) and ``status``.
* **Terms**, sources naming the field: ``LONG_COMMON_NAME`` (preferred), ``SHORTNAME``,
  ``DisplayName``, ``CONSUMER_NAME`` and each ``;``-separated ``RELATEDNAMES2`` entry
  (``LOINC:RELATEDNAMES2``), deduplicated case-insensitively. A row without
  LONG_COMMON_NAME is named by its next name field and counted.
* **Status:** ACTIVE rows are kept; TRIAL, DISCOURAGED and DEPRECATED ones only when
  ``include_status`` names them, the others counted as dropped by status. TRIAL is opt-in
  too: LOINC says a trial code "may change", and a mapping suggested to one can silently
  go wrong later, so a reviewer who wants them asks for them (``--include-status TRIAL``).
* No relations: ``Loinc.csv`` holds no hierarchy (that is the separate multiaxial
  hierarchy file).
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterator
from pathlib import Path

from termnorm.errors import InputFormatError
from termnorm.kg._text import Record, dedup_terms, require_columns
from termnorm.kg.options import LoincOptions
from termnorm.kg.records import Concept, LoadReport

__all__ = ["NAMESPACE", "STATUSES", "LoincOptions", "find_loinc_csv", "load_loinc"]

NAMESPACE = "LOINC"
STATUSES = ("ACTIVE", "TRIAL", "DISCOURAGED", "DEPRECATED")
AXES = {  # attribute: column
    "component": "COMPONENT",
    "property": "PROPERTY",
    "time_aspect": "TIME_ASPCT",
    "system": "SYSTEM",
    "scale_type": "SCALE_TYP",
    "method_type": "METHOD_TYP",
}
REQUIRED = ("LOINC_NUM", *AXES.values(), "CLASS", "STATUS", "LONG_COMMON_NAME", "SHORTNAME")
NAME_FIELDS = ("LONG_COMMON_NAME", "SHORTNAME", "DISPLAYNAME", "CONSUMER_NAME")
OPTIONAL = ("DISPLAYNAME", "CONSUMER_NAME", "RELATEDNAMES2", "CLASSTYPE")
SOURCE_LABELS = {"DISPLAYNAME": "DisplayName"}  # field: its spelling in the header
CLASS_TYPES = {"1": "Laboratory", "2": "Clinical", "3": "Claims attachments", "4": "Surveys"}
_CODE = re.compile(r"\d{1,7}-\d")


def find_loinc_csv(path: Path) -> Path:
    """``path`` when it is a file, else ``LoincTable/Loinc.csv`` or ``Loinc.csv`` in it."""
    if path.is_file():
        return path
    for candidate in (path / "LoincTable" / "Loinc.csv", path / "Loinc.csv"):
        if candidate.is_file():
            return candidate
    raise InputFormatError(
        path, None, "no Loinc.csv here nor in LoincTable/: give Loinc.csv or the LOINC folder"
    )


def _statuses(options: LoincOptions) -> set[str]:
    """ACTIVE plus ``include_status`` (upper-cased); an unknown status is an error."""
    wanted = {s.strip().upper() for s in options.include_status if s.strip()}
    unknown = sorted(wanted - set(STATUSES))
    if unknown:
        raise ValueError(
            f"unknown LOINC status {', '.join(unknown)} in include_status; "
            f"known: {', '.join(STATUSES)}"
        )
    return {"ACTIVE", *wanted}


def _columns(header: list[str], path: Path) -> dict[str, int]:
    """Upper-cased name -> position of the columns read (:data:`REQUIRED`, and
    :data:`OPTIONAL` when present); a missing required column is an error."""
    columns = {name.strip().upper(): at for at, name in enumerate(header)}
    require_columns(path, [*columns], REQUIRED, "LOINC's Loinc.csv")
    return {name: at for name, at in columns.items() if name in REQUIRED or name in OPTIONAL}


def _rows(path: Path) -> Iterator[tuple[int, dict[str, str]]]:
    """``(first line, {UPPER-CASED COLUMN: value})`` for each row; a row with another number
    of values than the header, or undecodable bytes, is an error naming its line."""
    with open(path, encoding="utf-8-sig", newline="") as handle:
        reader = csv.reader(handle)
        try:
            header = next(reader, None)
            if not header:
                raise InputFormatError(path, 1, "empty file: expected Loinc.csv's header row")
            columns = _columns(header, path)
            line = reader.line_num
            for row in reader:
                start, line = line + 1, reader.line_num
                if not row:
                    continue
                if len(row) != len(header):
                    raise InputFormatError(
                        path, start, f"expected {len(header)} columns, got {len(row)}"
                    )
                yield start, {name: row[at].strip() for name, at in columns.items()}
        except UnicodeDecodeError as exc:
            raise InputFormatError(path, reader.line_num + 1, f"not UTF-8 ({exc.reason})") from None
        except csv.Error as exc:
            raise InputFormatError(path, reader.line_num, f"malformed CSV ({exc})") from None


def load_loinc(
    path: Path, report: LoadReport, options: LoincOptions | None = None
) -> Iterator[Record]:
    """Yield each kept LOINC code as a concept followed by its terms (module docstring)."""
    statuses = _statuses(options or LoincOptions())
    file = find_loinc_csv(Path(path))
    report.info["file"] = str(file)
    seen: set[str] = set()
    for line, row in _rows(file):
        report.read["concepts"] += 1
        code = row["LOINC_NUM"]
        if not _CODE.fullmatch(code):
            raise InputFormatError(
                file, line, f"LOINC_NUM {code!r} is not a LOINC code (digits, '-', check digit)"
            )
        status = row["STATUS"].upper()
        if status not in statuses:
            report.drop(f"concept: status {status or '(empty)'} not selected (include_status)")
            continue
        if code in seen:
            report.drop("concept: repeated LOINC_NUM")
            continue
        terms = dedup_terms(f"{NAMESPACE}:{code}", _names(row, report), report)
        if not terms:
            report.drop("concept: no name")
            continue
        seen.add(code)
        report.keep("concepts")
        yield _concept(code, terms[0].term, row)
        yield from terms


def _names(row: dict[str, str], report: LoadReport) -> list[tuple[str, str, str]]:
    """``(text, lang, source)`` of the row's name fields, then its RELATEDNAMES2 entries."""
    if not row["LONG_COMMON_NAME"]:
        report.note("concepts without LONG_COMMON_NAME (named by the next name field)")
    items = [
        (row[field], "en", f"{NAMESPACE}:{SOURCE_LABELS.get(field, field)}")
        for field in NAME_FIELDS
        if row.get(field)
    ]
    related = row.get("RELATEDNAMES2", "")
    items += [
        (entry, "en", f"{NAMESPACE}:RELATEDNAMES2") for entry in related.split(";") if entry.strip()
    ]
    return items


def _concept(code: str, name: str, row: dict[str, str]) -> Concept:
    """The :class:`Concept` of one kept row."""
    attributes = [(key, row[column]) for key, column in AXES.items()]
    attributes.append(("class", row["CLASS"]))
    class_type = row.get("CLASSTYPE", "")
    if class_type:
        attributes.append(("class_type", CLASS_TYPES.get(class_type, class_type)))
    attributes.append(("status", row["STATUS"].upper()))
    return Concept(
        f"{NAMESPACE}:{code}",
        name,
        semantic_types=(row["CLASS"],) if row["CLASS"] else (),
        attributes=tuple(attributes),
    )
