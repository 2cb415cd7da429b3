"""CSV/TSV files mapped by the service (``POST /v1/normalize/file``): the size limit and the run.

:class:`UploadLimit` (ASGI middleware) guards the upload path: a request whose
``Content-Length`` is above the limit is answered 413 before its body is read, and a body
sent without one is cut as soon as it grows past the limit (413 too), so the form parser
never holds more than the limit.

:func:`map_upload` writes the uploaded file to a private temporary folder and runs
:func:`termnorm.search.batch.normalize_file` on it: the same one-row-per-row output as
``termnorm normalize --input`` (every input row once, in order, the concept columns
appended, a bad row answered in its ``error`` column), the same choice of the text column
(``column``, else the one column named text/term/mention, else refused listing the
columns). Its queries are encoded through the service's micro-batcher
(:class:`QueuedMatcher`), so file rows and interactive requests share one encoding thread and
one bounded queue: a file never starves the search box, and never makes it answer 503.
"""

from __future__ import annotations

import asyncio
import csv
import json
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
from starlette.exceptions import HTTPException

from termnorm.errors import InputFormatError, MissingExtraError
from termnorm.io.tables import TableFormat, open_reader
from termnorm.search.batch import BatchReport, normalize_file, text_column
from termnorm.search.matcher import SpaceMatcher
from termnorm.serve.batching import MicroBatcher, QueueFullError
from termnorm.serve.schemas import error_body

__all__ = [
    "UPLOAD_FORMATS",
    "UPLOAD_PATH",
    "MappedFile",
    "QueuedMatcher",
    "UploadLimit",
    "UploadProblem",
    "UploadTooLarge",
    "map_upload",
    "queued_encoder",
]

UPLOAD_PATH = "/v1/normalize/file"
UPLOAD_FORMATS = {".csv": TableFormat.CSV, ".tsv": TableFormat.TSV, ".tab": TableFormat.TSV}
"""Accepted file suffixes (any case) and the format each is read as."""
_MEDIA = {TableFormat.CSV: "text/csv", TableFormat.TSV: "text/tab-separated-values"}
_QUEUE_FULL_WAIT_S = (0.01, 0.5)  # first and longest wait before offering a slice again


def _size(limit: int) -> str:
    mib = limit / (1 << 20)
    return f"{mib:g} MiB ({limit} bytes)" if limit >= 1 << 20 else f"{limit} bytes"


def too_large_message(limit: int) -> str:
    """What a 413 on the upload path says."""
    return (
        f"the upload is larger than the limit of {_size(limit)}; split the file, or start "
        "the server with a larger --max-upload-mb"
    )


class UploadTooLarge(HTTPException):
    """The upload's body grew past the limit while it was read (answered 413)."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, too_large_message(limit))


class UploadLimit:
    """ASGI middleware: at most ``limit`` body bytes on ``path`` (see the module doc)."""

    def __init__(self, app: Any, limit: int, path: str = UPLOAD_PATH) -> None:
        self.app = app
        self.limit = limit
        self.path = path

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["path"] != self.path:
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        declared = headers.get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            error = error_body(["body", "file"], too_large_message(self.limit), "too_large")
            body = json.dumps(error).encode()
            await send(
                {
                    "type": "http.response.start",
                    "status": 413,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"content-length", str(len(body)).encode()),
                        (b"connection", b"close"),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": body})
            return
        received = 0

        async def limited() -> Any:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.limit:
                    raise UploadTooLarge(self.limit)
            return message

        await self.app(scope, limited, send)


def queued_encoder(
    batcher: MicroBatcher, loop: asyncio.AbstractEventLoop
) -> Callable[[list[str]], np.ndarray]:
    """An ``encode(texts)`` for worker threads that goes through ``batcher`` on ``loop``,
    offering the texts again (after a growing wait) while the queue is full."""

    def encode(texts: list[str]) -> np.ndarray:
        wait = _QUEUE_FULL_WAIT_S[0]
        while True:
            future = asyncio.run_coroutine_threadsafe(batcher.encode(texts), loop)
            try:
                return future.result()
            except QueueFullError:
                time.sleep(wait)
                wait = min(2 * wait, _QUEUE_FULL_WAIT_S[1])

    return encode


class QueuedMatcher(SpaceMatcher):
    """``matcher`` (same space, configuration and name) whose queries are encoded by
    ``encode`` (:func:`queued_encoder`) in slices of at most ``slice_texts`` texts."""

    def __init__(
        self,
        matcher: SpaceMatcher,
        encode: Callable[[list[str]], np.ndarray],
        slice_texts: int,
    ) -> None:
        super().__init__(matcher.space, matcher.config, matcher.name, matcher.batch_size)
        self._encode = encode
        self._slice = max(1, slice_texts)

    def encode_queries(self, queries: list[str]) -> np.ndarray:
        """The queries' vectors, a slice at a time through the service's queue."""
        return np.concatenate(
            [
                self._encode(queries[start : start + self._slice])
                for start in range(0, len(queries), self._slice)
            ]
        )


class UploadProblem(ValueError):
    """An upload the service cannot map: HTTP ``status``, the field (``loc``), the reason."""

    def __init__(self, status: int, loc: list[str | int], message: str, kind: str) -> None:
        super().__init__(message)
        self.status = status
        self.loc = loc
        self.kind = kind


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
    """The format of an uploaded file from its name; :class:`UploadProblem` (415) else."""
    suffix = Path(filename).suffix.lower()
    if suffix not in UPLOAD_FORMATS:
        accepted = ", ".join(UPLOAD_FORMATS)
        raise UploadProblem(
            415,
            ["body", "file"],
            f"{filename or 'the upload'!r} is not a CSV or TSV file (its name must end in "
            f"{accepted}); export the sheet as CSV, or use 'termnorm normalize --input' for "
            "JSONL and Parquet",
            "unsupported_file_type",
        )
    return UPLOAD_FORMATS[suffix]


def _shown(exc: InputFormatError, filename: str) -> str:
    """The message with the temporary path replaced by the uploaded file's name."""
    message, where = str(exc), str(exc.path)
    return filename + message[len(where) :] if message.startswith(where) else message


def map_upload(
    source: BinaryIO,
    filename: str,
    matcher: QueuedMatcher,
    column: str | None,
    k: int,
) -> MappedFile:
    """Copy ``source`` (the uploaded ``filename``) to a temporary folder and normalize its
    text column into ``NAME.norm.SUFFIX`` there (see the module doc). :class:`UploadProblem`
    (415 type, 422 column or content) when it cannot; the folder is removed then."""
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
            reader = open_reader(uploaded, fmt)
            where = "column"
            text_column(reader, column)  # refused here with the columns listed, before any work
            where = "file"
            report = normalize_file(matcher, uploaded, output, column, k, show_progress=False)
        except InputFormatError as exc:
            raise UploadProblem(422, ["body", where], _shown(exc, filename), where) from None
        except (UnicodeDecodeError, csv.Error) as exc:
            raise UploadProblem(
                422,
                ["body", "file"],
                f"{filename}: cannot be read as {fmt.value.upper()} ({exc}); save it as UTF-8 "
                f"{fmt.value.upper()} and upload it again",
                "file",
            ) from None
        except MissingExtraError as exc:  # e.g. abbreviation expansion of a context column
            raise UploadProblem(422, ["body", "file"], str(exc), "unsupported") from None
        return MappedFile(folder, output, f"{stem}.norm{suffix}", _MEDIA[fmt], report)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
