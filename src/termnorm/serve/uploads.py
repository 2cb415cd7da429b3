"""CSV/TSV files mapped by the service (``POST /v1/normalize/file``): the limits and the run.

The body size is capped before the form is parsed (:class:`~termnorm.serve.guards.BodyLimit`);
:func:`map_upload` then refuses a file with more columns or rows than :class:`UploadLimits`
allow (413 naming the limit and the flag that raises it) before any encoding (the header's
width before its names are checked: 200k repeated names are too many columns, not a list
of repeats), and stops
(:class:`UploadCancelled`) at the next slice of texts once ``cancelled`` is set:
:func:`watch_disconnect` sets it when the client goes away. The run happens on a worker
thread, never on the event loop.

:func:`map_upload` writes the uploaded file to a private temporary folder and runs
:func:`termnorm.search.batch.normalize_file` on it: the same one-row-per-row output as
``termnorm normalize --input`` (every input row once, in order, the concept columns
appended, a bad row answered in its ``error`` column), the same choice of the text column
(``column``, else the one column named text/term/mention, else refused listing the
columns). Its queries are encoded through the service's micro-batcher
(:class:`UploadQueue`), so file rows and interactive requests share one encoding thread and
one bounded queue: a file never starves the search box, and never makes it answer 503.
"""

from __future__ import annotations

import asyncio
import csv
import shutil
import tempfile
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np

from termnorm.errors import InputFormatError, MissingExtraError
from termnorm.io.decoding import DEFAULT_ENCODING, DecodeErrors
from termnorm.io.lines import TABLE_HINT, check_encoding
from termnorm.io.tables import CSV_FIELD_LIMIT, TableFormat, TableReader, open_reader
from termnorm.search.batch import BatchReport, normalize_file, text_column
from termnorm.search.candidate import RowMatcher
from termnorm.search.file_spec import NormalizeFileSpec, RowOptions
from termnorm.serve.batching import Send, sending
from termnorm.serve.errors import ApiError, shorten

__all__ = [
    "UPLOAD_FORMATS",
    "UPLOAD_HINT",
    "UPLOAD_PATH",
    "Decoding",
    "MappedFile",
    "UploadCancelled",
    "UploadLimits",
    "UploadQueue",
    "map_upload",
    "watch_disconnect",
]

UPLOAD_PATH = "/v1/normalize/file"
UPLOAD_FORMATS = {".csv": TableFormat.CSV, ".tsv": TableFormat.TSV, ".tab": TableFormat.TSV}
"""Accepted file suffixes (any case) and the format each is read as."""
UPLOAD_HINT = (
    "give the file's encoding in the form field encoding (e.g. latin-1, cp1252), or send "
    "errors=replace to keep the row with U+FFFD in their place"
)
"""What to do about undecodable bytes in an upload: the form's fields, not the CLI's flags."""
_MEDIA = {TableFormat.CSV: "text/csv", TableFormat.TSV: "text/tab-separated-values"}
_DISCONNECT_POLL_S = 0.25  # how often a running upload asks whether its client is still there
_MAX_LISTED = 1000  # characters of a message on the file's content (its columns listed)


class UploadCancelled(RuntimeError):
    """The client went away: the upload's work stopped."""


@dataclass(frozen=True)
class Decoding:
    """How an upload's bytes are decoded: the form fields ``encoding`` and ``errors``."""

    encoding: str = DEFAULT_ENCODING
    errors: DecodeErrors = DecodeErrors.STRICT

    def __post_init__(self) -> None:
        try:
            check_encoding(self.encoding)
        except ValueError as exc:
            raise ApiError(422, ["body", "encoding"], str(exc), "value_error") from None


@dataclass(frozen=True)
class UploadLimits:
    """Most data rows and columns of an upload (``--max-upload-rows``/``-columns``)."""

    rows: int
    columns: int


async def watch_disconnect(
    is_disconnected: Callable[[], Awaitable[bool]],
    cancelled: threading.Event,
    every_s: float = _DISCONNECT_POLL_S,
) -> None:
    """Set ``cancelled`` once ``is_disconnected()`` says the client has gone; return when it
    is set (by this or by the caller, once the work is done)."""
    while not cancelled.is_set():
        if await is_disconnected():
            cancelled.set()
            return
        await asyncio.sleep(every_s)


@dataclass(frozen=True)
class UploadQueue:
    """How an upload's rows reach the micro-batcher: through ``send``
    (:func:`~termnorm.serve.batching.queued_encoder`, waiting while the queue is full) in
    slices of at most ``slice_texts`` texts; :class:`UploadCancelled` before the next slice
    once ``cancelled`` is set."""

    send: Send
    slice_texts: int
    cancelled: threading.Event

    def __call__(self, texts: list[str]) -> np.ndarray:
        """The texts' vectors, a slice at a time."""
        step, vectors = max(1, self.slice_texts), []
        for start in range(0, len(texts), step):
            if self.cancelled.is_set():
                raise UploadCancelled("the client went away: the upload was stopped")
            vectors.append(self.send(texts[start : start + step]))
        return np.concatenate(vectors)


@dataclass
class MappedFile:
    """A mapped upload: the output ``path`` inside ``folder`` (delete the folder once sent),
    the download ``filename``, its ``media_type`` and what the run did."""

    folder: Path
    path: Path
    filename: str
    media_type: str
    report: BatchReport


def upload_format(filename: str) -> TableFormat:
    """The format of an uploaded file from its name; :class:`~termnorm.serve.errors.ApiError` (415) else."""
    suffix = Path(filename).suffix.lower()
    if suffix not in UPLOAD_FORMATS:
        accepted = ", ".join(UPLOAD_FORMATS)
        raise ApiError(
            415,
            ["body", "file"],
            f"{filename or 'the upload'!r} is not a CSV or TSV file (its name must end in "
            f"{accepted}); export the sheet as CSV, or use 'termnorm normalize --input' for "
            "JSONL and Parquet",
            "unsupported_file_type",
        )
    return UPLOAD_FORMATS[suffix]


def _shown(exc: InputFormatError, filename: str) -> str:
    """The message with the temporary path replaced by the uploaded file's name, the CLI's
    advice on encodings by the form's, and what it lists of the file (its columns) bounded."""
    message, where = str(exc).replace(TABLE_HINT, UPLOAD_HINT), str(exc.path)
    shown = filename + message[len(where) :] if message.startswith(where) else message
    return shorten(shown, _MAX_LISTED)


def header_width(path: Path, fmt: TableFormat, decoding: Decoding) -> int:
    """How many fields the header line of the CSV/TSV file ``path`` has, counted before the
    table reader checks their names (undecodable bytes count as characters here)."""
    if csv.field_size_limit() < CSV_FIELD_LIMIT:  # as the table reader reads it
        csv.field_size_limit(CSV_FIELD_LIMIT)
    with path.open(encoding=decoding.encoding, errors="replace", newline="") as lines:
        if fmt is TableFormat.TSV:
            rows = csv.reader(lines, delimiter="\t", quoting=csv.QUOTE_NONE)
        else:
            rows = csv.reader(lines)
        return len(next(rows, []))


def _check(count: int, limit: int, what: str, flag: str, filename: str) -> None:
    if count > limit:
        raise ApiError(
            413,
            ["body", "file"],
            f"{filename}: {count} {what}, more than the limit of {limit}; split the file "
            f"or keep fewer {what}, or start the server with a larger {flag}",
            f"too_many_{what}",
        )


def check_columns(width: int, filename: str, limits: UploadLimits) -> None:
    """:class:`~termnorm.serve.errors.ApiError` (413) naming the limit and its flag when the
    file's header has more than ``limits.columns`` fields."""
    _check(width, limits.columns, "columns", "--max-upload-columns", filename)


def check_size(reader: TableReader, filename: str, limits: UploadLimits) -> None:
    """:class:`~termnorm.serve.errors.ApiError` (413) naming the limit and its flag when the file has more
    columns or rows than ``limits``."""
    check_columns(len(reader.columns), filename, limits)
    _check(reader.num_rows, limits.rows, "rows", "--max-upload-rows", filename)


def map_upload(
    source: BinaryIO,
    filename: str,
    matcher: RowMatcher,
    queue: UploadQueue,
    rows: RowOptions,
    limits: UploadLimits,
    decoding: Decoding | None = None,
) -> MappedFile:
    """Copy ``source`` (the uploaded ``filename``) to a temporary folder and normalize its
    text column into ``NAME.norm.SUFFIX`` there (see the module doc) as ``rows`` asks, decoded as
    ``decoding`` says (UTF-8, strict, by default), with ``matcher`` (built over the service's
    space) encoding through ``queue``. :class:`~termnorm.serve.errors.ApiError` (415 type,
    413 too many rows or columns, 422 column or content) when it cannot,
    :class:`UploadCancelled` when ``queue.cancelled`` is set; the folder is removed then."""
    decoding = decoding or Decoding()
    fmt = upload_format(filename)
    suffix = Path(filename).suffix.lower()
    stem = Path(filename).stem or "upload"
    folder = Path(tempfile.mkdtemp(prefix="termnorm-upload-"))
    try:
        uploaded = folder / f"upload{suffix}"
        with uploaded.open("wb") as out:
            shutil.copyfileobj(source, out, 1 << 20)
        output = folder / f"mapped{suffix}"
        where = "file"
        try:
            check_columns(header_width(uploaded, fmt, decoding), filename, limits)
            reader = open_reader(uploaded, fmt, decoding.encoding, decoding.errors)
            check_size(reader, filename, limits)
            where = "column"
            text_column(reader, rows.column)  # refused here, columns listed, before any work
            where = "file"
            job = NormalizeFileSpec(
                uploaded,
                output,
                rows=rows,
                encoding=decoding.encoding,
                errors=decoding.errors,
                show_progress=False,
            )
            report = sending(queue, normalize_file, matcher, job)
        except InputFormatError as exc:
            raise ApiError(422, ["body", where], _shown(exc, filename), where) from None
        except (UnicodeError, csv.Error) as exc:
            raise ApiError(
                422,
                ["body", "file"],
                shorten(
                    f"{filename}: cannot be read as {fmt.value.upper()} ({exc}); save it as "
                    f"UTF-8 {fmt.value.upper()} and upload it again, or {UPLOAD_HINT}",
                    _MAX_LISTED,
                ),
                "file",
            ) from None
        except MissingExtraError as exc:  # e.g. abbreviation expansion of a context column
            raise ApiError(422, ["body", "file"], str(exc), "unsupported") from None
        return MappedFile(folder, output, f"{stem}.norm{suffix}", _MEDIA[fmt], report)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
