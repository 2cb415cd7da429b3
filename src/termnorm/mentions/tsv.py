"""``id<TAB>text`` mention files (CADEC and PsyTAR folds as distributed by CODER).

A fold folder holds ``train.txt``, ``test.txt`` and ``standard.txt`` (the target concepts:
one SNOMED CT ID and its standard text a line). Texts may be CSV-quoted (a field wrapped in
double quotes, inner quotes doubled, as PsyTAR's); files may use CRLF line ends.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from termnorm.errors import InputFormatError
from termnorm.mentions._lines import preview, read_lines, require_exists
from termnorm.mentions.mention import Mention, make_mention

__all__ = ["FOLD_TARGETS", "FOLD_TEST", "Target", "fold_file", "read_targets", "read_tsv_mentions"]

FOLD_TEST = "test.txt"
FOLD_TARGETS = "standard.txt"
_EXPECTED = "expected 'id<TAB>text' (format tsv)"


class Target(NamedTuple):
    """One normalization target of a zero-shot fold: a concept ID and its standard text."""

    concept_id: str
    text: str


def unquote(text: str) -> str:
    """Undo CSV quoting of a whole field: drop the outer quotes, undouble the inner ones.

    Text that does not both start and end with a double quote is returned stripped.
    """
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] == '"':
        return text[1:-1].replace('""', '"')
    return text


def fold_file(path: Path, name: str) -> Path:
    """``path/name`` for a fold folder, else ``path`` itself (missing ones are an error)."""
    require_exists(path)
    if path.is_dir():
        return require_exists(path / name)
    return path


def _pairs(path: Path) -> list[tuple[int, str, str]]:
    """``(line_no, id, text)`` of every non-blank line of an ``id<TAB>text`` file."""
    out: list[tuple[int, str, str]] = []
    for line_no, line in enumerate(read_lines(path), start=1):
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) != 2 or not fields[0].strip():
            raise InputFormatError(path, line_no, f"{_EXPECTED}; got {preview(line)}")
        out.append((line_no, fields[0].strip(), unquote(fields[1])))
    return out


def read_tsv_mentions(path: Path) -> list[Mention]:
    """Mentions of an ``id<TAB>text`` file; a fold folder reads its ``test.txt``."""
    path = fold_file(path, FOLD_TEST)
    return [
        make_mention(text, cid, path.stem, location=f"{path}:{line_no}")
        for line_no, cid, text in _pairs(path)
    ]


def read_targets(path: str | Path) -> list[Target]:
    """Targets of a ``standard.txt`` file (or of a fold folder), duplicates removed."""
    path = fold_file(Path(path), FOLD_TARGETS)
    seen: set[Target] = set()
    out: list[Target] = []
    for _line_no, cid, text in _pairs(path):
        target = Target(cid, text)
        if target not in seen:
            seen.add(target)
            out.append(target)
    return out
