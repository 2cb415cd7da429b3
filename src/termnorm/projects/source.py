"""Reading a source code list: one row per code, checked whole before anything is stored.

A source file is any table :func:`termnorm.io.tables.open_reader` reads (CSV, TSV, JSONL,
Parquet). The code and text columns are required; a frequency column must hold numbers;
context columns are kept as they are (shown to reviewers). Refused, naming the file and the
rows: a missing column (the file's columns listed), an empty code or text, a code on more
than one row (every duplicate listed with its rows), a frequency that is not a number, a
code, text or context cell holding a NUL character (:mod:`termnorm.projects.storable`).
Undecodable bytes stop the read at their file:line unless ``errors`` is ``replace``.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from termnorm._artifacts import file_sha256
from termnorm.errors import DuplicateCodesError, InputFormatError, SourceChangedError
from termnorm.io.decoding import DecodeErrors
from termnorm.io.tables import open_reader
from termnorm.projects.settings import ProjectSource
from termnorm.projects.storable import has_nul

__all__ = ["SourceEntry", "check_unchanged", "read_source"]

_SHOWN = 10
_CHUNK = 8192


@dataclass(frozen=True)
class SourceEntry:
    """One code of a source list: its text, frequency and context columns."""

    code: str
    text: str
    frequency: float | None
    context: dict[str, Any] | None


def _listed(items: list[str]) -> str:
    more = f" and {len(items) - _SHOWN} more" if len(items) > _SHOWN else ""
    return ", ".join(items[:_SHOWN]) + more


def _cell(value: Any) -> str:
    return "" if value is None else str(value).strip()


def _frequency(value: Any) -> float | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    number = float(value)
    if math.isnan(number) or number < 0:
        raise ValueError(value)
    return number


def read_source(
    path: str | Path,
    code_column: str,
    text_column: str,
    frequency_column: str | None = None,
    context_columns: tuple[str, ...] = (),
    encoding: str = "utf-8-sig",
    errors: DecodeErrors | str = DecodeErrors.STRICT,
) -> tuple[ProjectSource, list[SourceEntry]]:
    """The :class:`ProjectSource` of ``path`` (its digest included) and its rows, in file order.
    Raises :class:`~termnorm.errors.InputFormatError` (or :class:`DuplicateCodesError`) as
    the module says; data rows are numbered from 1 (the header is not a row)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"source file {path} does not exist")
    errors = DecodeErrors(errors)
    reader = open_reader(path, encoding=encoding, errors=errors)
    wanted = [code_column, text_column, *([frequency_column] if frequency_column else [])]
    missing = [c for c in [*wanted, *context_columns] if c not in reader.columns]
    if missing:
        raise InputFormatError(
            path, None, f"no column {', '.join(map(repr, missing))}; columns are {reader.columns}"
        )
    entries: list[SourceEntry] = []
    rows_of: dict[str, list[int]] = defaultdict(list)
    empty_codes, empty_texts, bad_numbers, nuls = [], [], [], []
    number = 0
    for chunk in reader.chunks(_CHUNK):
        for record in chunk:
            number += 1
            code, text = _cell(record.get(code_column)), _cell(record.get(text_column))
            if not code:
                empty_codes.append(str(number))
            if not text:
                empty_texts.append(f"{number} ({code or 'no code'})")
            try:
                frequency = _frequency(record.get(frequency_column)) if frequency_column else None
            except (TypeError, ValueError):
                bad_numbers.append(f"{number} ({record.get(str(frequency_column))!r})")
                frequency = None
            context = {c: record.get(c) for c in context_columns} or None
            if has_nul([code, text, context]):
                nuls.append(f"{number} ({code.replace(chr(0), '?') or 'no code'})")
            rows_of[code].append(number)
            entries.append(SourceEntry(code, text, frequency, context))
    if empty_codes:
        raise InputFormatError(
            path, None, f"empty {code_column!r} on data row(s) {_listed(empty_codes)}"
        )
    if empty_texts:
        raise InputFormatError(
            path,
            None,
            f"empty {text_column!r} on data row(s) {_listed(empty_texts)}: give every code a "
            "text (or drop those rows)",
        )
    if bad_numbers:
        raise InputFormatError(
            path,
            None,
            f"{frequency_column!r} is not a non-negative number on data row(s) "
            f"{_listed(bad_numbers)}",
        )
    if nuls:
        raise InputFormatError(
            path,
            None,
            f"a NUL character (U+0000) in the code, text or context of data row(s) "
            f"{_listed(nuls)}: a project stores no NUL (PostgreSQL cannot); remove them",
        )
    duplicates = [
        f"{c!r} (rows {', '.join(map(str, r))})" for c, r in rows_of.items() if len(r) > 1
    ]
    if duplicates:
        raise DuplicateCodesError(
            path,
            None,
            f"{len(duplicates)} code(s) on more than one row: {_listed(duplicates)}; a code "
            "must name one row (merge or rename them)",
        )
    if not entries:
        raise InputFormatError(path, None, "has no data row")
    spec = ProjectSource(
        str(path.resolve()),
        file_sha256(path),
        code_column,
        text_column,
        frequency_column,
        tuple(context_columns),
        encoding,
        errors.value,
    )
    return spec, entries


def check_unchanged(project: str, spec: ProjectSource) -> None:
    """:class:`~termnorm.errors.SourceChangedError` when the file ``spec`` was read
    from now has other bytes (a file since moved or deleted is fine: the rows are stored)."""
    path = Path(spec.path)
    if not path.is_file():
        return
    now = file_sha256(path)
    if now != spec.sha256:
        raise SourceChangedError(
            f"{path} changed since project {project!r} read it (sha256 {spec.sha256} -> {now}); "
            "the project still holds the rows it read. Bring the new version in with "
            f"termnorm map apply {project} --source {path} (its unchanged rows keep their "
            "decisions), or go on without it (--ignore-source-change)"
        )
