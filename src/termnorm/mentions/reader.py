"""``read_mentions(path, format=None)``: one entry point over every mention reader.

The format is detected from the path when not given: a folder of ``*.concept`` files is
BioSyn, a folder with ``ann/`` (or of annotation files) is PhenoBERT, a folder with
``test.txt`` is a CADEC/PsyTAR fold; a file is recognised from its first lines (``PMID|t|`` → PubTator, ``||`` fields →
BioSyn, an ID line then a text line then tab-separated annotations → GSC+, two tab fields →
``id<TAB>text``, four or five tab fields starting with offsets → PhenoBERT).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from pathlib import Path

from termnorm.errors import EmptyResultError, InputFormatError
from termnorm.mentions._lines import read_lines, require_exists
from termnorm.mentions.biosyn import read_biosyn
from termnorm.mentions.hpo import read_gscplus, read_phenobert
from termnorm.mentions.mention import Mention, MentionFormat
from termnorm.mentions.pubtator import TEXT_LINE, read_pubtator
from termnorm.mentions.tsv import FOLD_TEST, read_tsv_mentions

__all__ = ["detect_format", "parse_format", "read_mentions"]

_SAMPLE_LINES = 20
_OFFSETS = re.compile(r"^\d+\t\d+\t")
_READERS: dict[MentionFormat, Callable[[Path], list[Mention]]] = {
    MentionFormat.PUBTATOR: read_pubtator,
    MentionFormat.BIOSYN: read_biosyn,
    MentionFormat.TSV: read_tsv_mentions,
    MentionFormat.GSCPLUS: read_gscplus,
    MentionFormat.PHENOBERT: read_phenobert,
}


def parse_format(value: MentionFormat | str) -> MentionFormat:
    """``value`` as a :class:`MentionFormat`; an unknown name lists the known ones."""
    try:
        return MentionFormat(value)
    except ValueError:
        known = ", ".join(f.value for f in MentionFormat)
        raise ValueError(f"unknown mention format {value!r}; known formats: {known}") from None


def _detect_folder(path: Path) -> MentionFormat | None:
    if any(path.glob("*.concept")):
        return MentionFormat.BIOSYN
    if (path / "ann").is_dir():
        return MentionFormat.PHENOBERT
    if (path / FOLD_TEST).is_file():
        return MentionFormat.TSV
    files = sorted(p for p in path.iterdir() if p.is_file() and not p.name.startswith("."))
    if files and _detect_file(files[0]) is MentionFormat.PHENOBERT:
        return MentionFormat.PHENOBERT  # an ann/ folder itself
    return None


def _detect_file(path: Path) -> MentionFormat | None:
    if path.suffix == ".concept":
        return MentionFormat.BIOSYN
    lines = [line for line in read_lines(path) if line.strip()][:_SAMPLE_LINES]
    if not lines:
        return None
    first = lines[0]
    if TEXT_LINE.match(first):
        return MentionFormat.PUBTATOR
    if first.count("||") == 4:
        return MentionFormat.BIOSYN
    if "\t" not in first and len(lines) > 2 and _OFFSETS.match(lines[2]):
        return MentionFormat.GSCPLUS
    if all(line.count("\t") == 1 for line in lines):
        return MentionFormat.TSV
    if all(_OFFSETS.match(line) and 3 <= line.count("\t") <= 4 for line in lines):
        return MentionFormat.PHENOBERT
    return None


def detect_format(path: str | Path) -> MentionFormat:
    """The :class:`MentionFormat` of ``path``, or an :class:`InputFormatError` naming it."""
    path = require_exists(Path(path))
    found = _detect_folder(path) if path.is_dir() else _detect_file(path)
    if found is None:
        known = ", ".join(f.value for f in MentionFormat)
        raise InputFormatError(
            path, None, f"cannot detect the mention format; pass one of: {known}"
        )
    return found


def read_mentions(
    path: str | Path,
    format: MentionFormat | str | None = None,
    entity_types: Collection[str] | None = None,
) -> list[Mention]:
    """All mentions of a dataset file or folder, in file order.

    ``format`` defaults to :func:`detect_format`; ``entity_types`` filters PubTator mentions
    by their type column (other formats have none). A missing path, a line in another format,
    and a dataset without any mention raise errors that name the file.
    """
    path = require_exists(Path(path))
    fmt = detect_format(path) if format is None else parse_format(format)
    if fmt is MentionFormat.PUBTATOR:
        mentions = read_pubtator(path, entity_types)
    else:
        mentions = _READERS[fmt](path)
    if not mentions:
        raise EmptyResultError(f"{path}: no mention found (format {fmt.value})")
    return mentions
