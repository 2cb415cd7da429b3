"""Reading the tables of an Athena (OMOP vocabulary) download, streamed in column batches.

Athena ships each table as ``NAME.csv`` that is in fact tab-separated without quoting (a
name may hold a ``"``); exports from a CDM database (Eunomia) are comma CSV with quoting.
Both start with a header row; :func:`table_layout` tells them apart by the header line
(a tab in it: tab-separated). Files may be gzip-compressed (``NAME.csv.gz``).

:func:`read_batches` streams a table through ``pyarrow.csv`` (bounded memory: one block of
``block_size`` bytes at a time), typed columns only, as pandas frames. pyarrow does not say
on which line a row is malformed, so on a parse or conversion error the file is scanned
again with the ``csv`` module up to the first bad line, and the
:class:`~termnorm.errors.InputFormatError` names ``FILE:LINE``.
"""

from __future__ import annotations

import csv
import gzip
import io
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv

from termnorm.errors import InputFormatError
from termnorm.kg._text import require_columns

__all__ = ["TableLayout", "find_table", "read_batches", "table_layout"]

DEFAULT_BLOCK_SIZE = 1 << 24
"""Bytes of a file parsed per batch (16 MiB)."""
_SUFFIXES = ("", ".csv", ".tsv", ".txt", ".csv.gz", ".tsv.gz", ".txt.gz")


@dataclass(frozen=True)
class TableLayout:
    """A table file's delimiter and header columns."""

    path: Path
    delimiter: str
    columns: tuple[str, ...]


def find_table(folder: Path, name: str) -> Path | None:
    """The file of table ``name`` (``CONCEPT``) in ``folder``: ``NAME``, ``NAME.csv``,
    ``.tsv``, ``.txt`` (optionally ``.gz``), in any letter case; ``None`` when absent."""
    wanted = {(name + suffix).casefold() for suffix in _SUFFIXES}
    found = sorted(p for p in folder.iterdir() if p.is_file() and p.name.casefold() in wanted)
    return found[0] if found else None


def _open_text(path: Path) -> io.TextIOBase:
    """``path`` as UTF-8 text (gzip when it ends in ``.gz``; a byte-order mark skipped)."""
    if path.suffix == ".gz":
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8-sig", newline="")
    return open(path, encoding="utf-8-sig", newline="")


def table_layout(path: Path) -> TableLayout:
    """Delimiter (tab when the header line holds one, else comma) and header columns."""
    with _open_text(path) as handle:
        try:
            header = handle.readline()
        except UnicodeDecodeError as exc:
            raise InputFormatError(path, 1, f"not UTF-8 ({exc.reason})") from None
    header = header.rstrip("\r\n")
    if not header.strip():
        raise InputFormatError(path, 1, "empty file: expected a header row naming the columns")
    delimiter = "\t" if "\t" in header else ","
    columns = next(csv.reader([header], delimiter=delimiter))
    return TableLayout(path, delimiter, tuple(c.strip().lower() for c in columns))


def read_batches(
    layout: TableLayout,
    columns: Mapping[str, pa.DataType],
    block_size: int = DEFAULT_BLOCK_SIZE,
    kind: str = "an Athena/OMOP vocabulary table",
) -> Iterator[pd.DataFrame]:
    """The table's ``columns`` (name -> type), batch by batch; strings may be empty (``""``),
    integers may not.

    A column missing from the header is an error naming the file, the columns it has and
    the ``kind`` of table expected; a malformed row, or an integer column empty or holding
    something else, an error naming its line. (SNOMED CT's RF2 files share the tab-separated,
    unquoted layout and are read here too.)
    """
    require_columns(layout.path, layout.columns, columns, kind)
    tab = layout.delimiter == "\t"
    read = pacsv.ReadOptions(block_size=block_size, column_names=list(layout.columns), skip_rows=1)
    parse = pacsv.ParseOptions(delimiter=layout.delimiter, quote_char=False if tab else '"')
    strings = [name for name, t in columns.items() if pa.types.is_string(t)]
    convert = pacsv.ConvertOptions(
        column_types=dict(columns),
        include_columns=list(columns),
        strings_can_be_null=False,
        quoted_strings_can_be_null=False,
        null_values=[""],
    )
    try:
        stream = pa.input_stream(str(layout.path), compression="detect")
        reader = pacsv.open_csv(stream, read, parse, convert)
        for batch in reader:
            frame = batch.to_pandas()
            if frame.drop(columns=strings).isna().to_numpy().any():
                raise pa.ArrowInvalid("an empty integer value")
            yield frame
    except (pa.ArrowInvalid, UnicodeDecodeError) as exc:
        line, message = _locate(layout, columns)
        raise InputFormatError(layout.path, line, message or str(exc)) from None


def _locate(layout: TableLayout, columns: Mapping[str, pa.DataType]) -> tuple[int | None, str]:
    """The first line of the file that pyarrow could not read, and why (``(None, "")``
    when the ``csv`` module finds none)."""
    positions = {name: layout.columns.index(name) for name in columns}
    integers = [name for name, t in columns.items() if pa.types.is_integer(t)]
    try:
        with _open_text(layout.path) as handle:
            tab = layout.delimiter == "\t"
            reader = (
                csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
                if tab
                else csv.reader(handle, delimiter=layout.delimiter)
            )
            next(reader, None)
            for row in reader:
                line = reader.line_num
                if len(row) != len(layout.columns):
                    return line, f"expected {len(layout.columns)} columns, got {len(row)}"
                for name in integers:
                    value = row[positions[name]].strip()
                    if not value.lstrip("-").isdigit():
                        return line, f"{name} is not an integer: {value!r}"
    except UnicodeDecodeError as exc:
        return None, f"not UTF-8 ({exc.reason})"
    return None, ""
