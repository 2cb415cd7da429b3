"""Gettext catalogues (``.po`` files) → entries, for the loaders of translated terminologies.

The grammar read is the one Tryton and Weblate write: entries separated by blank lines, each
with optional comments (``#,`` flags such as ``fuzzy``; ``#:``, ``#.``, ``# `` are skipped),
an optional ``msgctxt``, then ``msgid`` and ``msgstr``. A keyword's string may continue on the
following lines (``"..."`` lines are concatenated). Strings are double-quoted with the C
escapes ``\\\\ \\" \\n \\t \\r \\a \\b \\f \\v``. Obsolete entries (``#~``) are skipped. Plural
entries (``msgid_plural``, ``msgstr[n]``) and anything else are an
:class:`~termnorm.errors.InputFormatError` naming the file and line.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from termnorm.errors import InputFormatError
from termnorm.kg._text import iter_lines

_ESCAPES = {
    "\\": "\\",
    '"': '"',
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "v": "\v",
}
_KEYWORD = re.compile(r"^(msgctxt|msgid|msgstr)\s+(\".*)$")
_ESCAPE = re.compile(r"\\(.)")
_STRING_BODY = re.compile(r'^"((?:[^"\\]|\\.)*)"\s*$')


@dataclass(frozen=True, slots=True)
class PoEntry:
    """One catalogue entry: context, source text, translation, flags, first line number."""

    msgctxt: str | None
    msgid: str
    msgstr: str
    flags: frozenset[str]
    line: int

    @property
    def fuzzy(self) -> bool:
        """Marked ``#, fuzzy`` (a guess that a translator has not confirmed)."""
        return "fuzzy" in self.flags


def unquote(text: str, path: Path, line: int) -> str:
    """The value of one ``"..."`` token with its escapes decoded; malformed → error."""
    match = _STRING_BODY.match(text.strip())
    if match is None:
        raise InputFormatError(path, line, f"expected a double-quoted string, got {text.strip()!r}")
    body = match.group(1)
    if "\\" not in body:
        return body

    def decode(escape: re.Match[str]) -> str:
        char = escape.group(1)
        if char not in _ESCAPES:
            raise InputFormatError(path, line, f"unknown escape '\\{char}' in a string")
        return _ESCAPES[char]

    return _ESCAPE.sub(decode, body)


class _Builder:
    """The entry being read: its fields so far and where it started."""

    def __init__(self) -> None:
        self.fields: dict[str, str] = {}
        self.flags: set[str] = set()
        self.line = 0
        self.last = ""  # the keyword that continuation lines extend

    def entry(self, path: Path) -> PoEntry:
        """The finished entry; one without its msgid or msgstr is an error."""
        missing = [k for k in ("msgid", "msgstr") if k not in self.fields]
        if missing:
            raise InputFormatError(path, self.line, f"entry without {' and '.join(missing)}")
        return PoEntry(
            self.fields.get("msgctxt"),
            self.fields["msgid"],
            self.fields["msgstr"],
            frozenset(self.flags),
            self.line,
        )


def read_po(path: Path) -> Iterator[PoEntry]:
    """Yield the entries of the catalogue ``path`` in file order (the header entry included)."""
    current = _Builder()
    for number, raw in iter_lines(path):
        line = raw.strip()
        match = _KEYWORD.match(line)
        starts_entry = not line or line.startswith("#") or (match and match.group(1) != "msgstr")
        if starts_entry and "msgstr" in current.fields:  # the entry read so far is complete
            yield current.entry(path)
            current = _Builder()
        if not line or line.startswith("#~"):
            continue
        if line.startswith("#"):
            if line.startswith("#,"):
                current.flags.update(f.strip() for f in line[2:].split(",") if f.strip())
            continue
        if line.startswith('"'):
            if not current.last:
                raise InputFormatError(path, number, "a string line before any msgid/msgstr")
            current.fields[current.last] += unquote(line, path, number)
            continue
        if match is None:
            raise InputFormatError(
                path, number, f"expected msgctxt, msgid, msgstr or a string, got {line[:40]!r}"
            )
        keyword, value = match.groups()
        if keyword in current.fields:
            raise InputFormatError(path, number, f"{keyword} repeated in one entry")
        if keyword == "msgctxt" and "msgid" in current.fields:
            raise InputFormatError(path, number, "msgctxt after msgid (msgstr missing)")
        if keyword == "msgstr" and "msgid" not in current.fields:
            raise InputFormatError(path, number, "msgstr without a msgid before it")
        if not current.fields:
            current.line = number
        current.fields[keyword] = unquote(value, path, number)
        current.last = keyword
    if current.fields:
        yield current.entry(path)
