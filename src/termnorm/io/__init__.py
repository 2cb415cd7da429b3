"""Tabular files in and out (CSV, TSV, JSONL, Parquet), streamed and row-preserving."""

from termnorm.io.tables import (
    TableFormat,
    TableReader,
    TableWriter,
    atomic_file,
    detect_format,
    open_reader,
    open_writer,
)

__all__ = [
    "TableFormat",
    "TableReader",
    "TableWriter",
    "atomic_file",
    "detect_format",
    "open_reader",
    "open_writer",
]
