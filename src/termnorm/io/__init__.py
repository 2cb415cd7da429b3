"""Tabular files in and out (CSV, TSV, JSONL, Parquet), streamed, row-preserving, resumable.

Names resolve lazily, so the CLI can read :mod:`termnorm.io.decoding` without loading pyarrow.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from termnorm._lazy import lazy_getattr

__all__ = [
    "DEFAULT_ENCODING",
    "DecodeErrors",
    "ResumableOutput",
    "ResumableParts",
    "ResumeError",
    "TableFormat",
    "TableReader",
    "TableWriter",
    "atomic_file",
    "detect_format",
    "open_reader",
    "open_writer",
    "work_dir",
]

_NAMES = {  # module: the names it gives
    "decoding": "DEFAULT_ENCODING DecodeErrors",
    "resumable": "ResumableOutput ResumableParts ResumeError work_dir",
    "tables": "TableFormat TableReader TableWriter atomic_file detect_format open_reader open_writer",
}

if TYPE_CHECKING:  # pragma: no cover
    from termnorm.io.decoding import DEFAULT_ENCODING, DecodeErrors
    from termnorm.io.resumable import ResumableOutput, ResumableParts, ResumeError, work_dir
    from termnorm.io.tables import (
        TableFormat,
        TableReader,
        TableWriter,
        atomic_file,
        detect_format,
        open_reader,
        open_writer,
    )

__getattr__ = lazy_getattr(__name__, {n: m for m, names in _NAMES.items() for n in names.split()})
