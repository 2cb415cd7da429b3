"""Row-preserving streaming of tabular files: CSV, TSV, JSONL and Parquet.

Every format is read as chunks of records (``dict`` column → value, in file order) and
written back from records, so a caller can add columns without touching the others.
Every reader knows its row count before the first chunk (``num_rows``: Parquet from its
metadata, CSV/TSV/JSONL from one counting pass), so progress bars have a total.

* CSV/TSV: all values are strings, read and written as-is. CSV uses standard quoting; TSV
  has no quoting (a tab always separates), and tabs/newlines inside values written to TSV
  become spaces. A blank line is a row of empty values (never skipped); a row with more
  fields than the header is an :class:`InputFormatError` naming the line; missing trailing
  fields are empty. A field may hold up to :data:`CSV_FIELD_LIMIT` characters (a longer one
  is an error naming the line: usually an unclosed quote).
* JSONL: one JSON object per non-blank line; values keep their JSON types. The columns are
  the union of the keys of all records, in first-seen order (a key missing from a record is
  a missing value there). Each column also gets an Arrow type for Parquet output
  (:func:`json_column_type`): one JSON kind throughout → that type (bool, int64, float64 for
  numbers, string); anything else (mixed kinds, lists, objects, integers beyond 64 bits) →
  string, each value written as its JSON text (``1`` → ``"1"``, ``true`` → ``"true"``,
  ``[1]`` → ``"[1]"``; strings unchanged).
* Parquet: values keep their Arrow types; output schema = input schema + added columns.

Text files are decoded line by line with ``encoding`` (default UTF-8, a byte-order mark
skipped) and ``errors``: ``strict`` (default) stops at the first undecodable bytes with an
:class:`InputFormatError` naming the file and line; ``replace`` keeps the row with U+FFFD in
place of those bytes and lists the lines it repaired in ``TableReader.replaced_lines``.
"""

from __future__ import annotations

import contextlib
import csv
import json
import os
import tempfile
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Iterator, Sequence
from enum import Enum
from pathlib import Path
from typing import IO, Any

import pyarrow as pa
import pyarrow.parquet as pq

from termnorm._artifacts import umask_mode
from termnorm.errors import InputFormatError
from termnorm.io.decoding import DEFAULT_ENCODING, DecodeErrors
from termnorm.io.lines import DecodedLines as _Lines
from termnorm.paths import writing

__all__ = [
    "CSV_FIELD_LIMIT",
    "DEFAULT_ENCODING",
    "DecodeErrors",
    "Record",
    "TableFormat",
    "TableReader",
    "TableWriter",
    "atomic_file",
    "detect_format",
    "json_column_type",
    "open_reader",
    "open_writer",
]

Record = dict[str, Any]

CSV_FIELD_LIMIT = 1 << 24
"""Longest CSV/TSV field read (16,777,216 characters; Python's default is 131,072). Longer
cells than a matcher accepts become per-row errors; a field past this limit is almost always
an unclosed quote swallowing the rest of the file, so it stops the read at its line."""
_INT64 = (-(2**63), 2**63 - 1)


class TableFormat(str, Enum):
    """Tabular file formats, recognised by suffix."""

    CSV = "csv"
    TSV = "tsv"
    JSONL = "jsonl"
    PARQUET = "parquet"


SUFFIXES = {
    ".csv": TableFormat.CSV,
    ".tsv": TableFormat.TSV,
    ".tab": TableFormat.TSV,
    ".jsonl": TableFormat.JSONL,
    ".ndjson": TableFormat.JSONL,
    ".parquet": TableFormat.PARQUET,
    ".pq": TableFormat.PARQUET,
}


def detect_format(path: str | Path) -> TableFormat:
    """The format of ``path`` from its suffix; :class:`InputFormatError` listing known ones."""
    suffix = Path(path).suffix.lower()
    if suffix not in SUFFIXES:
        known = ", ".join(sorted(SUFFIXES))
        raise InputFormatError(path, None, f"unknown file type {suffix!r}; use one of {known}")
    return SUFFIXES[suffix]


@contextlib.contextmanager
def atomic_file(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; rename it onto ``path`` on success."""
    path = Path(path)
    with writing(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix=f".{path.name}.tmp-", dir=path.parent)
    os.close(fd)
    tmp = Path(name)
    tmp.chmod(umask_mode(directory=False))  # mkstemp makes 0600; the result is the user's
    try:
        yield tmp
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    os.replace(tmp, path)


def _unterminated(record: list[str]) -> bool:
    """Whether the lines of a CSV file's last row end inside a quoted field (the lenient
    reader returns such a field holding the rest of the file; the strict one refuses)."""
    try:
        list(csv.reader(record, strict=True))
    except csv.Error as exc:
        return "unexpected end of data" in str(exc)
    return False


# ---------------------------------------------------------------------------- readers
class TableReader(ABC):
    """Column names, an Arrow schema (when known), the row count, and chunks of records.

    ``replaced_lines``: the lines where undecodable bytes were replaced (``errors=replace``),
    complete once the chunks have been read.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.columns: list[str] = []
        self.schema: pa.Schema | None = None
        self.num_rows: int = 0
        self.replaced_lines: list[int] = []

    @abstractmethod
    def chunks(self, rows: int, skip: int = 0) -> Iterator[list[Record]]:
        """Records in file order, ``rows`` at a time (the last chunk may be shorter), after
        the first ``skip`` records."""


def _rechunk(records: Iterator[Record], rows: int, skip: int) -> Iterator[list[Record]]:
    chunk: list[Record] = []
    for n, record in enumerate(records):
        if n < skip:
            continue
        chunk.append(record)
        if len(chunk) == rows:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


class _CsvReader(TableReader):
    def __init__(self, path: Path, delimiter: str, encoding: str, errors: DecodeErrors) -> None:
        super().__init__(path)
        self.delimiter = delimiter
        self.encoding, self.errors = encoding, errors
        if csv.field_size_limit() < CSV_FIELD_LIMIT:  # never lowers a limit raised further
            csv.field_size_limit(CSV_FIELD_LIMIT)
        rows = self._rows(self._lines())
        header = next(rows, None)
        if not header:
            raise InputFormatError(path, 1, "no header line; the first line must name columns")
        repeated = sorted(c for c, n in Counter(header).items() if n > 1)  # O(n)
        if repeated:
            raise InputFormatError(path, 1, f"repeated column names: {', '.join(repeated)}")
        self.columns = header
        self.schema = pa.schema([(c, pa.string()) for c in header])
        self.num_rows = sum(1 for _ in rows)
        self.replaced_lines = []  # counted again by the chunks

    def _lines(self) -> _Lines:
        return _Lines(self.path, self.encoding, self.errors)

    def _rows(self, lines: _Lines) -> Iterator[list[str]]:
        """Parsed rows; csv errors become :class:`InputFormatError` at their line, and so does
        a CSV quote never closed (:func:`_unterminated`, at the line of the row it opens in)."""
        record: list[str] = []  # the physical lines of the row being read

        def tracked() -> Iterator[str]:
            for line in lines:
                record.append(line)
                yield line

        if self.delimiter == "\t":
            reader = csv.reader(tracked(), delimiter="\t", quoting=csv.QUOTE_NONE)
        else:
            reader = csv.reader(tracked())
        last: list[str] = []
        while True:
            record.clear()
            try:
                fields = next(reader)
            except StopIteration:
                if self.delimiter != "\t" and last and _unterminated(last):
                    raise InputFormatError(
                        self.path,
                        lines.line - len(last) + 1,
                        "a quoted field opens on this line and is never closed, so it would "
                        "swallow every following row; close the quote (a quote inside a "
                        'quoted field is written "")',
                    ) from None
                return
            except csv.Error as exc:
                hint = (
                    " (an unclosed quote?)" if "field larger than field limit" in str(exc) else ""
                )
                raise InputFormatError(self.path, lines.line, f"{exc}{hint}") from exc
            self.replaced_lines = lines.replaced
            last = record[:]
            yield fields

    def _records(self) -> Iterator[Record]:
        width = len(self.columns)
        lines = self._lines()
        rows = self._rows(lines)
        next(rows)
        for fields in rows:
            if len(fields) > width:
                raise InputFormatError(
                    self.path, lines.line, f"{len(fields)} fields, the header has {width}"
                )
            fields = fields + [""] * (width - len(fields))
            yield dict(zip(self.columns, fields, strict=True))

    def chunks(self, rows: int, skip: int = 0) -> Iterator[list[Record]]:
        return _rechunk(self._records(), rows, skip)


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int" if _INT64[0] <= value <= _INT64[1] else "bigint"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "str"
    return "list" if isinstance(value, list) else "object"


def json_column_type(kinds: set[str]) -> pa.DataType:
    """The Arrow type of a JSONL column whose values are of these JSON ``kinds`` (see the
    module docstring): bool, int64, float64 or string."""
    kinds = kinds - {"null"}
    if kinds == {"bool"}:
        return pa.bool_()
    if kinds == {"int"}:
        return pa.int64()
    if kinds and kinds <= {"int", "float"}:
        return pa.float64()
    return pa.string()


class _JsonlReader(TableReader):
    def __init__(self, path: Path, encoding: str, errors: DecodeErrors) -> None:
        super().__init__(path)
        self.encoding, self.errors = encoding, errors
        kinds: dict[str, set[str]] = {}
        for record in self._records():  # one pass: columns, their kinds, the row count
            self.num_rows += 1
            for key, value in record.items():
                kinds.setdefault(key, set()).add(_json_kind(value))
        self.columns = list(kinds)
        self.schema = pa.schema([(c, json_column_type(k)) for c, k in kinds.items()])
        self.replaced_lines = []  # counted again by the chunks

    def _records(self) -> Iterator[Record]:
        lines = _Lines(self.path, self.encoding, self.errors)
        for line in lines:
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputFormatError(self.path, lines.line, f"invalid JSON: {exc.msg}") from exc
            if not isinstance(record, dict):
                raise InputFormatError(
                    self.path, lines.line, 'each line must be a JSON object like {"term": ...}'
                )
            self.replaced_lines = lines.replaced
            yield record

    def chunks(self, rows: int, skip: int = 0) -> Iterator[list[Record]]:
        return _rechunk(self._records(), rows, skip)


class _ParquetReader(TableReader):
    def __init__(self, path: Path) -> None:
        super().__init__(path)
        try:
            self._file = pq.ParquetFile(path)
        except (pa.ArrowInvalid, OSError) as exc:
            raise InputFormatError(path, None, f"not a readable Parquet file: {exc}") from exc
        self.schema = self._file.schema_arrow
        self.columns = list(self.schema.names)
        self.num_rows = self._file.metadata.num_rows

    def chunks(self, rows: int, skip: int = 0) -> Iterator[list[Record]]:
        if skip:  # start at the row group holding row ``skip``
            meta = self._file.metadata
            start, first = 0, meta.num_row_groups
            for g in range(meta.num_row_groups):
                size = meta.row_group(g).num_rows
                if start + size > skip:
                    first = g
                    break
                start += size
            groups = list(range(first, meta.num_row_groups))
            batches = self._file.iter_batches(batch_size=rows, row_groups=groups)
            return _rechunk((r for b in batches for r in b.to_pylist()), rows, skip - start)
        return (batch.to_pylist() for batch in self._file.iter_batches(batch_size=rows))


def open_reader(
    path: str | Path,
    fmt: TableFormat | None = None,
    encoding: str = DEFAULT_ENCODING,
    errors: DecodeErrors | str = DecodeErrors.STRICT,
) -> TableReader:
    """A reader for ``path`` (format from the suffix unless given). ``encoding`` and
    ``errors`` apply to CSV, TSV and JSONL (see the module docstring)."""
    path = Path(path)
    if not path.is_file():
        raise InputFormatError(path, None, "no such file")
    fmt = fmt or detect_format(path)
    errors = DecodeErrors(errors)
    if fmt is TableFormat.PARQUET:
        return _ParquetReader(path)
    if fmt is TableFormat.JSONL:
        return _JsonlReader(path, encoding, errors)
    return _CsvReader(path, "\t" if fmt is TableFormat.TSV else ",", encoding, errors)


# ---------------------------------------------------------------------------- writers
class TableWriter(ABC):
    """Writes records with a fixed column list; ``close`` finishes the file."""

    _fh: IO[str]

    def __init__(self, path: Path, columns: Sequence[str]) -> None:
        self.path = path
        self.columns = list(columns)

    def __enter__(self) -> TableWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @abstractmethod
    def write(self, records: list[Record]) -> None:
        """Append records (missing keys are written as empty/null)."""

    def close(self) -> None:
        """Flush and close the file."""
        self._fh.close()


def _cell(value: Any, tsv: bool) -> str:
    """A CSV/TSV cell: ``None`` → empty, lists/dicts → JSON, others ``str``."""
    if value is None:
        return ""
    text = json.dumps(value, ensure_ascii=False) if isinstance(value, list | dict) else str(value)
    return " ".join(text.splitlines()).replace("\t", " ") if tsv else text


class _CsvWriter(TableWriter):
    def __init__(
        self, path: Path, columns: Sequence[str], delimiter: str, header: bool = True
    ) -> None:
        super().__init__(path, columns)
        self._tsv = delimiter == "\t"
        self._fh = open(path, "w", newline="", encoding="utf-8")  # noqa: SIM115 - close()
        if self._tsv:
            self._writer = csv.writer(
                self._fh,
                delimiter="\t",
                quoting=csv.QUOTE_NONE,
                quotechar=None,
                lineterminator="\n",
            )
        else:
            self._writer = csv.writer(self._fh, lineterminator="\n")
        if header:
            self._writer.writerow(self.columns)

    def write(self, records: list[Record]) -> None:
        self._writer.writerows(
            [[_cell(r.get(c), self._tsv) for c in self.columns] for r in records]
        )


class _JsonlWriter(TableWriter):
    def __init__(self, path: Path, columns: Sequence[str]) -> None:
        super().__init__(path, columns)
        self._fh = open(path, "w", encoding="utf-8")  # noqa: SIM115 - closed by close()

    def write(self, records: list[Record]) -> None:
        for record in records:
            self._fh.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")


def _fit(value: Any, kind: pa.DataType) -> Any:
    """``value`` for a Parquet column of type ``kind``: a non-text value in a string column
    becomes its JSON text (the JSONL rule of the module docstring)."""
    if value is None or isinstance(value, str) or not pa.types.is_string(kind):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


class _ParquetWriter(TableWriter):
    def __init__(self, path: Path, columns: Sequence[str], schema: pa.Schema | None) -> None:
        super().__init__(path, columns)
        self._schema = schema
        self._writer: pq.ParquetWriter | None = None

    def _complete_schema(self, rows: list[Record]) -> pa.Schema:
        """The given schema's fields, plus types inferred from ``rows`` (null → string)."""
        known = {f.name: f for f in self._schema} if self._schema is not None else {}
        missing = [c for c in self.columns if c not in known]
        if missing:
            inferred = pa.Table.from_pylist([{c: r.get(c) for c in missing} for r in rows])
            for f in inferred.schema:
                known[f.name] = pa.field(f.name, pa.string()) if pa.types.is_null(f.type) else f
            for c in missing:
                known.setdefault(c, pa.field(c, pa.string()))
        metadata = self._schema.metadata if self._schema is not None else None
        return pa.schema([known[c] for c in self.columns], metadata=metadata)

    def write(self, records: list[Record]) -> None:
        if self._writer is None:
            self._schema = self._complete_schema(
                [{c: r.get(c) for c in self.columns} for r in records]
            )
            self._writer = pq.ParquetWriter(self.path, self._schema)
        assert self._schema is not None
        types = [(f.name, f.type) for f in self._schema]
        rows = [{c: _fit(r.get(c), t) for c, t in types} for r in records]
        try:
            table = pa.Table.from_pylist(rows, schema=self._schema)
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
            raise InputFormatError(self.path, None, f"values do not fit one schema: {exc}") from exc
        self._writer.write_table(table)

    def close(self) -> None:
        if self._writer is None:  # no rows: still write a valid, empty file
            self._schema = self._complete_schema([])
            self._writer = pq.ParquetWriter(self.path, self._schema)
        self._writer.close()


def open_writer(
    path: Path,
    fmt: TableFormat,
    columns: Sequence[str],
    schema: pa.Schema | None = None,
    header: bool = True,
) -> TableWriter:
    """A writer of ``columns`` to ``path``.

    For Parquet, ``schema`` fixes the types of the columns it names (a non-text value bound
    for a string column is written as its JSON text); the others are inferred from the
    first chunk (all-null columns become strings). ``header=False`` leaves out the CSV/TSV
    header line (for parts of one file).
    """
    if fmt is TableFormat.PARQUET:
        return _ParquetWriter(path, columns, schema)
    if fmt is TableFormat.JSONL:
        return _JsonlWriter(path, columns)
    return _CsvWriter(path, columns, "\t" if fmt is TableFormat.TSV else ",", header)
