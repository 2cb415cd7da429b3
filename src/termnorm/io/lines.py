"""Decoding a text file line by line, so that undecodable bytes are reported at their
``FILE:LINE`` with the option that fixes them.

:class:`DecodedLines` is what the table readers (:mod:`termnorm.io.tables`) and the KG
loaders (``termnorm kg build``) read text with. ASCII-compatible
encodings are decoded line by line (the error names the line and the byte); others
(UTF-16/32) through a text stream (the line, no byte). Files ending in ``.gz`` are
decompressed on the fly.
"""

from __future__ import annotations

import codecs
import gzip
import io
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from termnorm.errors import InputFormatError
from termnorm.io.decoding import DEFAULT_ENCODING, DecodeErrors

__all__ = ["TABLE_HINT", "DecodedLines", "check_encoding"]

TABLE_HINT = (
    "give the file's encoding with --encoding (e.g. latin-1, cp1252; encoding= in the API), "
    "or --errors replace to keep the row with U+FFFD in their place"
)
"""What to do about undecodable bytes in a table (``termnorm normalize --input`` & co.)."""

_PROBE = 'a\n,\t"{}:'


def _ascii_compatible(encoding: str) -> bool:
    """Whether ``encoding`` writes ASCII (newlines included) as ASCII bytes, so that a file
    can be split into lines before decoding."""
    return _PROBE.encode(encoding).endswith(_PROBE.encode("ascii"))


def check_encoding(encoding: str) -> str:
    """``encoding`` when Python knows the codec; ``ValueError`` naming a few otherwise."""
    try:
        codecs.lookup(encoding)
    except LookupError as exc:
        raise ValueError(
            f"unknown encoding {encoding!r}; use a Python codec name such as utf-8, "
            "latin-1, cp1252 or utf-16"
        ) from exc
    return encoding


def _open_binary(path: Path) -> BinaryIO:
    if path.suffix == ".gz":
        return gzip.open(path, "rb")  # type: ignore[return-value]
    return open(path, "rb")


class DecodedLines:
    """The decoded lines of a text file (line endings kept), counting physical lines in
    ``line``; ``hint`` ends the error message for undecodable bytes (what to change).

    With ``errors`` ``strict`` the first undecodable bytes raise :class:`InputFormatError`
    at their line; with ``replace`` they become U+FFFD and ``replaced`` lists their lines.
    """

    def __init__(
        self, path: Path, encoding: str, errors: DecodeErrors, hint: str = TABLE_HINT
    ) -> None:
        self.path = path
        self.encoding = check_encoding(encoding)
        self.errors = errors
        self.hint = hint
        self.line = 0
        self.replaced: list[int] = []
        self._shown = "utf-8" if encoding == DEFAULT_ENCODING else encoding

    def _fail(self, exc: UnicodeDecodeError, line: bytes | None) -> InputFormatError:
        column = f" at byte {exc.start + 1}" if line is not None else ""
        bad = exc.object[exc.start : exc.end] if line is not None else b""
        shown = f" {bytes(bad)!r}" if bad else ""
        return InputFormatError(
            self.path, self.line, f"bytes{shown}{column} are not valid {self._shown}; {self.hint}"
        )

    def __iter__(self) -> Iterator[str]:
        with _open_binary(self.path) as raw:
            if _ascii_compatible(self.encoding):
                yield from self._by_line(raw)
            else:
                yield from self._by_stream(raw)

    def _by_line(self, raw: BinaryIO) -> Iterator[str]:
        decoder = codecs.getincrementaldecoder(self.encoding)("strict")
        lenient = codecs.getincrementaldecoder(self.encoding)("replace")
        for line in raw:
            self.line += 1
            try:
                text = decoder.decode(line)
            except UnicodeDecodeError as exc:
                if self.errors is DecodeErrors.STRICT:
                    raise self._fail(exc, line) from exc
                decoder.reset()
                lenient.reset()
                text = lenient.decode(line)
                self.replaced.append(self.line)
            yield text
        try:
            decoder.decode(b"", final=True)
        except UnicodeDecodeError as exc:  # a truncated multi-byte sequence at the very end
            if self.errors is DecodeErrors.STRICT:
                raise self._fail(exc, None) from exc
            self.replaced.append(self.line)

    def _by_stream(self, raw: BinaryIO) -> Iterator[str]:
        text = io.TextIOWrapper(raw, self.encoding, errors=self.errors.value, newline="")
        try:
            for line in text:
                self.line += 1
                if "\ufffd" in line and self.errors is DecodeErrors.REPLACE:
                    self.replaced.append(self.line)
                yield line
        except UnicodeDecodeError as exc:
            self.line += 1
            raise self._fail(exc, None) from exc
        finally:
            text.detach()
