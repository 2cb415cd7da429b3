"""Row-preserving streaming of tabular files: CSV, TSV, JSONL and Parquet.

Every format is read as chunks of records (``dict`` column → value, in file order) and
written back from records, so a caller can add columns without touching the others:

* CSV/TSV: all values are strings, read and written as-is. CSV uses standard quoting; TSV
  has no quoting (a tab always separates), and tabs/newlines inside values written to TSV
  become spaces. A blank line is a row of empty values (never skipped); a row with more
  fields than the header is an :class:`InputFormatError` naming the line; missing trailing
  fields are empty.
* JSONL: one JSON object per non-blank line; values keep their JSON types.
* Parquet: values keep their Arrow types; output schema = input schema + added columns.

Output is written to a temporary file next to the target and renamed over it at the end, so
a failed run leaves no partial file.
"""

from __future__ import annotations

import contextlib
import csv
import json
import os
import tempfile
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from enum import Enum
from pathlib import Path
from typing import Any, TextIO

import pyarrow as pa
import pyarrow.parquet as pq

from termnorm._artifacts import umask_mode
from termnorm.errors import InputFormatError

__all__ = [
    "Record",
    "TableFormat",
    "TableReader",
    "TableWriter",
    "atomic_file",
    "detect_format",
    "open_reader",
    "open_writer",
]

Record = dict[str, Any]


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


# ---------------------------------------------------------------------------- readers
class TableReader(ABC):
    """Column names, an optional Arrow schema / row count, and chunks of records."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.columns: list[str] = []
        self.schema: pa.Schema | None = None
        self.num_rows: int | None = None

    @abstractmethod
    def chunks(self, rows: int) -> Iterator[list[Record]]:
        """Records in file order, ``rows`` at a time (the last chunk may be shorter)."""


class _CsvReader(TableReader):
    def __init__(self, path: Path, delimiter: str) -> None:
        super().__init__(path)
        self.delimiter = delimiter
        with self._open() as fh:
            header = next(self._rows(fh), None)
        if not header:
            raise InputFormatError(path, 1, "no header line; the first line must name columns")
        repeated = sorted({c for c in header if header.count(c) > 1})
        if repeated:
            raise InputFormatError(path, 1, f"repeated column names: {', '.join(repeated)}")
        self.columns = header
        self.schema = pa.schema([(c, pa.string()) for c in header])

    def _open(self) -> TextIO:
        return open(self.path, newline="", encoding="utf-8-sig")

    def _rows(self, fh: TextIO) -> Any:  # a csv reader (typeshed's type is private)
        if self.delimiter == "\t":
            return csv.reader(fh, delimiter="\t", quoting=csv.QUOTE_NONE)
        return csv.reader(fh)

    def chunks(self, rows: int) -> Iterator[list[Record]]:
        width = len(self.columns)
        with self._open() as fh:
            reader = self._rows(fh)
            next(reader)
            chunk: list[Record] = []
            for fields in reader:
                if len(fields) > width:
                    raise InputFormatError(
                        self.path, reader.line_num, f"{len(fields)} fields, the header has {width}"
                    )
                fields = fields + [""] * (width - len(fields))
                chunk.append(dict(zip(self.columns, fields, strict=True)))
                if len(chunk) == rows:
                    yield chunk
                    chunk = []
            if chunk:
                yield chunk


class _JsonlReader(TableReader):
    def __init__(self, path: Path) -> None:
        super().__init__(path)
        first = next(self._records(), None)
        self.columns = list(first) if first is not None else []

    def _records(self) -> Iterator[Record]:
        with open(self.path, encoding="utf-8-sig") as fh:
            for line_no, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise InputFormatError(self.path, line_no, f"invalid JSON: {exc.msg}") from exc
                if not isinstance(record, dict):
                    raise InputFormatError(
                        self.path, line_no, 'each line must be a JSON object like {"term": ...}'
                    )
                yield record

    def chunks(self, rows: int) -> Iterator[list[Record]]:
        chunk: list[Record] = []
        for record in self._records():
            chunk.append(record)
            if len(chunk) == rows:
                yield chunk
                chunk = []
        if chunk:
            yield chunk


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

    def chunks(self, rows: int) -> Iterator[list[Record]]:
        for batch in self._file.iter_batches(batch_size=rows):
            yield batch.to_pylist()


def open_reader(path: str | Path, fmt: TableFormat | None = None) -> TableReader:
    """A reader for ``path`` (format from the suffix unless given)."""
    path = Path(path)
    if not path.is_file():
        raise InputFormatError(path, None, "no such file")
    fmt = fmt or detect_format(path)
    if fmt is TableFormat.PARQUET:
        return _ParquetReader(path)
    if fmt is TableFormat.JSONL:
        return _JsonlReader(path)
    return _CsvReader(path, "\t" if fmt is TableFormat.TSV else ",")


# ---------------------------------------------------------------------------- writers
class TableWriter(ABC):
    """Writes records with a fixed column list; ``close`` finishes the file."""

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

    @abstractmethod
    def close(self) -> None:
        """Flush and close the file."""


def _cell(value: Any, tsv: bool) -> str:
    """A CSV/TSV cell: ``None`` → empty, lists/dicts → JSON, others ``str``."""
    if value is None:
        return ""
    text = json.dumps(value, ensure_ascii=False) if isinstance(value, list | dict) else str(value)
    return " ".join(text.splitlines()).replace("\t", " ") if tsv else text


class _CsvWriter(TableWriter):
    def __init__(self, path: Path, columns: Sequence[str], delimiter: str) -> None:
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
        self._writer.writerow(self.columns)

    def write(self, records: list[Record]) -> None:
        self._writer.writerows(
            [[_cell(r.get(c), self._tsv) for c in self.columns] for r in records]
        )

    def close(self) -> None:
        self._fh.close()


class _JsonlWriter(TableWriter):
    def __init__(self, path: Path, columns: Sequence[str]) -> None:
        super().__init__(path, columns)
        self._fh = open(path, "w", encoding="utf-8")  # noqa: SIM115 - closed by close()

    def write(self, records: list[Record]) -> None:
        for record in records:
            self._fh.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")

    def close(self) -> None:
        self._fh.close()


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
        return pa.schema([known[c] for c in self.columns])

    def write(self, records: list[Record]) -> None:
        rows = [{c: r.get(c) for c in self.columns} for r in records]
        try:
            if self._writer is None:
                self._schema = self._complete_schema(rows)
                self._writer = pq.ParquetWriter(self.path, self._schema)
            table = pa.Table.from_pylist(rows, schema=self._schema)
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
            raise InputFormatError(self.path, None, f"values do not fit one schema: {exc}") from exc
        self._writer.write_table(table)

    def close(self) -> None:
        if self._writer is None:  # no rows: still write a valid, empty file
            self._writer = pq.ParquetWriter(self.path, self._complete_schema([]))
        self._writer.close()


def open_writer(
    path: Path, fmt: TableFormat, columns: Sequence[str], schema: pa.Schema | None = None
) -> TableWriter:
    """A writer of ``columns`` to ``path``.

    For Parquet, ``schema`` fixes the types of the columns it names; the others are inferred
    from the first chunk (all-null columns become strings).
    """
    if fmt is TableFormat.PARQUET:
        return _ParquetWriter(path, columns, schema)
    if fmt is TableFormat.JSONL:
        return _JsonlWriter(path, columns)
    return _CsvWriter(path, columns, "\t" if fmt is TableFormat.TSV else ",")
