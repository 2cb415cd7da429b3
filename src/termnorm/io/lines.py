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
import encodings
import encodings.aliases
import functools
import gzip
import io
import pkgutil
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from termnorm.errors import InputFormatError
from termnorm.io.decoding import DEFAULT_ENCODING, DecodeErrors

__all__ = ["TABLE_HINT", "DecodedLines", "check_encoding", "text_encodings"]

TABLE_HINT = (
    "give the file's encoding with --encoding (e.g. latin-1, cp1252; encoding= in the API), "
    "or --errors replace to keep the row with U+FFFD in their place"
)
"""What to do about undecodable bytes in a table (``termnorm normalize --input`` & co.)."""

_PROBE = 'a\n,\t"{}:'
_TEXT_ENCODINGS = "use a Python codec name such as utf-8, latin-1, cp1252 or utf-16"


def _ascii_compatible(encoding: str) -> bool:
    """Whether ``encoding`` writes ASCII (newlines included) as ASCII bytes, so that a file
    can be split into lines before decoding."""
    return _PROBE.encode(encoding).endswith(_PROBE.encode("ascii"))


def check_encoding(encoding: str) -> str:
    """``encoding`` when it names a text encoding Python has (bytes to ``str``, any case or
    alias: ``UTF8``, ``latin-1``); ``ValueError`` saying why not and naming a few otherwise:
    an unknown name, a codec that does not decode bytes to text (``hex``, ``base64``,
    ``rot13``, ``bz2``, ...) or one that reads no file (``undefined``, ``idna``). The one check of
    every ``--encoding`` option and of the service's ``encoding`` field."""
    try:
        info = codecs.lookup(encoding)
    except LookupError as exc:
        raise ValueError(f"unknown encoding {encoding!r}; {_TEXT_ENCODINGS}") from exc
    if not _reads_text(info):
        raise ValueError(
            f"{encoding!r} is not a text encoding (Python's {info.name!r} codec does not "
            f"read bytes as text); {_TEXT_ENCODINGS}"
        )
    return encoding


def _reads_text(info: codecs.CodecInfo) -> bool:
    """Whether the codec decodes bytes to text (the stdlib's own flag, which ``str.encode``
    checks), round-trips a line of a table and takes ``errors="replace"`` (``--errors
    replace``): ``undefined`` refuses everything, ``idna`` and ``punycode`` (host names)
    refuse that."""
    if not info._is_text_encoding:
        return False
    try:
        info.decode(bytes(range(256)), "replace")
        return bool(info.decode(info.encode(_PROBE)[0])[0] == _PROBE)
    except UnicodeError:
        return False


@functools.cache
def text_encodings() -> tuple[str, ...]:
    """The canonical name (``codecs.lookup(name).name``) of every encoding
    :func:`check_encoding` accepts, sorted; each one's aliases are accepted too."""
    names = set(encodings.aliases.aliases.values())
    names.update(m.name for m in pkgutil.iter_modules(encodings.__path__))
    found = set()
    for name in names:
        try:
            info = codecs.lookup(name)
        except LookupError:  # a helper module (aliases), or another platform's (mbcs)
            continue
        if _reads_text(info):
            found.add(info.name)
    return tuple(sorted(found))


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
