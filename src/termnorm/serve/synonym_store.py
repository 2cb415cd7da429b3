"""The file that keeps domain synonyms added through the service across restarts.

JSON Lines, one ``{"concept_id": ..., "text": ...}`` object per line, UTF-8. New pairs are
appended and flushed to disk (``fsync``) before the service answers: every byte is written
(a short ``write`` is continued until all are) or :class:`SynonymStoreError` is raised, the
file cut back to its size before the call and nothing acknowledged. So a pair the service
acknowledged survives a crash or a kill.

A crash in the middle of an append can still leave a *torn last line* (a line cut short,
or the bytes a lost write left behind). Reading skips it, logs a warning naming the file and
line and counts it (:attr:`StoreContents.skipped`, shown by ``/v1/ready``): every whole line
is kept and the service starts. The next append moves the torn bytes to ``FILE.torn`` and
starts on a fresh line. Any other line that is not such an object raises
:class:`~termnorm.errors.InputFormatError` naming the file and line: the service refuses to
start on a damaged file rather than drop synonyms silently.
"""

from __future__ import annotations

import errno
import json
import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from termnorm.errors import InputFormatError, SynonymStoreError

__all__ = [
    "StoreContents",
    "SynonymStoreError",
    "append_synonym_store",
    "read_synonym_store",
    "torn_path",
]

logger = logging.getLogger(__name__)

_TAIL_BLOCK = 4096  # bytes read at a time, backwards, to find the last line


@dataclass(frozen=True)
class StoreContents:
    """The ``(concept_id, text)`` pairs of a store file in file order, and the line number
    of a torn last line that was skipped (``None`` when the file is whole)."""

    pairs: list[tuple[str, str]]
    torn_line: int | None = None

    @property
    def skipped(self) -> int:
        """How many lines were skipped (0 or 1: only a last line can be torn)."""
        return 0 if self.torn_line is None else 1


def torn_path(path: Path) -> Path:
    """Where an append moves the torn last line of ``path``: ``path`` + ``.torn``."""
    return path.with_name(path.name + ".torn")


def read_synonym_store(path: Path) -> StoreContents:
    """The pairs of ``path`` (none when it does not exist); a torn last line is skipped with
    a warning, any other bad line raises :class:`InputFormatError` naming file and line."""
    if not path.exists():
        return StoreContents([])
    lines = path.read_bytes().split(b"\n")
    filled = [i for i, raw in enumerate(lines) if raw.strip()]
    pairs: list[tuple[str, str]] = []
    for i in filled:
        try:
            pairs.append(_parse(lines[i], path, i + 1))
        except InputFormatError as exc:
            if i != filled[-1]:
                raise
            logger.warning(
                "%s; skipped as a torn last line (a write cut short by a crash): the %d whole "
                "lines before it are loaded, and the next added synonym moves it to %s",
                exc,
                len(pairs),
                torn_path(path),
            )
            return StoreContents(pairs, i + 1)
    return StoreContents(pairs)


def append_synonym_store(path: Path, pairs: Sequence[tuple[str, str]]) -> None:
    """Append ``(concept_id, text)`` pairs to ``path`` (created when missing), durably, on a
    fresh line; a torn last line is moved to :func:`torn_path` first. On any failure the
    file is cut back to its size before the call and :class:`SynonymStoreError` raised."""
    if not pairs:
        return
    data = "".join(
        json.dumps({"concept_id": c, "text": t}, ensure_ascii=False) + "\n" for c, t in pairs
    ).encode("utf-8")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o666)
    except OSError as exc:
        raise _store_error(path, exc) from exc
    try:
        size = _fresh_line(fd, path)
        if size and os.pread(fd, 1, size - 1) != b"\n":
            data = b"\n" + data  # a whole last line without its newline
        try:
            write_all(fd, data)
            os.fsync(fd)
        except OSError as exc:
            _cut_back(fd, size)
            raise _store_error(path, exc) from exc
    except SynonymStoreError:
        raise
    except OSError as exc:
        raise _store_error(path, exc) from exc
    finally:
        os.close(fd)


def write_all(fd: int, data: bytes) -> None:
    """Write every byte of ``data`` to ``fd``, continuing after a short ``os.write``; an
    ``OSError`` when the system accepts none."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        if written <= 0:
            raise OSError(errno.EIO, f"write accepted 0 of {len(view)} bytes")
        view = view[written:]


def _parse(raw: bytes, path: Path, line_no: int) -> tuple[str, str]:
    """The pair of one line; :class:`InputFormatError` naming ``path:line_no`` when it is
    not UTF-8 JSON of the form ``{"concept_id": str, "text": str}``."""
    try:
        record = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise InputFormatError(path, line_no, "not UTF-8; fix or remove the line") from None
    except json.JSONDecodeError as exc:
        raise InputFormatError(
            path, line_no, f"not JSON ({exc.msg}); fix or remove the line"
        ) from None
    if (
        not isinstance(record, dict)
        or not isinstance(record.get("concept_id"), str)
        or not isinstance(record.get("text"), str)
    ):
        raise InputFormatError(
            path, line_no, 'expected {"concept_id": "...", "text": "..."}; fix the line'
        )
    return record["concept_id"], record["text"]


def _fresh_line(fd: int, path: Path) -> int:
    """The file's size once a torn last line is moved to :func:`torn_path` (cut off)."""
    size = os.fstat(fd).st_size
    start, last = _last_line(fd, size)
    if not last:
        return size
    try:
        _parse(last, path, 0)
    except InputFormatError:
        kept = torn_path(path)
        torn_fd = os.open(kept, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
        try:
            write_all(torn_fd, last + b"\n")
            os.fsync(torn_fd)
        finally:
            os.close(torn_fd)
        os.ftruncate(fd, start)
        os.fsync(fd)
        logger.warning("%s: moved its torn last line (%d bytes) to %s", path, len(last), kept)
        return start
    return size


def _last_line(fd: int, size: int) -> tuple[int, bytes]:
    """Offset and bytes of the last non-blank line of ``fd`` (``b""`` when none), read
    backwards block by block."""
    block = _TAIL_BLOCK
    while True:
        start = max(0, size - block)
        body = os.pread(fd, size - start, start).rstrip()
        cut = body.rfind(b"\n")
        if cut >= 0 or start == 0:
            return start + cut + 1, body[cut + 1 :]
        block *= 2


def _cut_back(fd: int, size: int) -> None:
    """Best effort: drop what a failed append left after ``size``."""
    try:
        os.ftruncate(fd, size)
        os.fsync(fd)
    except OSError:
        logger.exception("could not cut the synonyms store back to %d bytes", size)


def _store_error(path: Path, exc: OSError) -> SynonymStoreError:
    reason = exc.strerror or str(exc)
    return SynonymStoreError(
        f"{path}: could not store the synonyms ({reason}); nothing was added: free disk "
        "space or fix the file's permissions, then add them again",
    )
