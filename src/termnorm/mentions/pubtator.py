"""PubTator mention files (NCBI disease corpus, BC5CDR's ``.PubTator.txt``).

Layout, one document after another, separated by blank lines::

    PMID|t|title
    PMID|a|abstract
    PMID<TAB>start<TAB>end<TAB>mention<TAB>type<TAB>ids[<TAB>part|part]
    PMID<TAB>CID<TAB>D1<TAB>D2                (relation lines: skipped)

A document's text is its text lines (title, abstract) joined by one newline: the offsets
count one character between title and abstract, so they index into it.

``ids`` is one ID, several joined by ``|`` or ``+`` (composite), or ``-1`` (unlinkable);
a missing ID column also means unlinkable. BC5CDR's optional 7th column gives the texts of a
composite mention's parts.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from pathlib import Path

from termnorm.errors import InputFormatError
from termnorm.mentions._lines import field_int, preview, read_lines
from termnorm.mentions.mention import Mention, make_mention

__all__ = ["TEXT_LINE", "read_pubtator", "read_pubtator_documents"]

TEXT_LINE = re.compile(r"^[^\t|]+\|[a-zA-Z]\|")
_EXPECTED = "expected 'PMID|t|text' or 'PMID<TAB>start<TAB>end<TAB>mention<TAB>type<TAB>id'"


def read_pubtator(path: Path, entity_types: Collection[str] | None = None) -> list[Mention]:
    """Mentions of a PubTator file, in file order; ``entity_types`` keeps only those types."""
    mentions: list[Mention] = []
    for line_no, line in enumerate(read_lines(path), start=1):
        if not line.strip() or TEXT_LINE.match(line):
            continue
        fields = line.split("\t")
        if len(fields) == 4 and not fields[1].strip().isdigit():
            continue  # relation line: PMID<TAB>CID<TAB>chemical<TAB>disease
        if not 5 <= len(fields) <= 7:
            raise InputFormatError(
                path, line_no, f"{_EXPECTED} (format pubtator); got {preview(line)}"
            )
        doc_id, start, end, text, etype = (f.strip() for f in fields[:5])
        if entity_types is not None and etype not in entity_types:
            continue
        mention = make_mention(
            text,
            fields[5] if len(fields) > 5 else "",
            doc_id,
            field_int(path, line_no, start, "start offset"),
            field_int(path, line_no, end, "end offset"),
            location=f"{path}:{line_no}",
            parts=tuple(fields[6].split("|")) if len(fields) > 6 else (),
        )
        mentions.append(mention)
    return mentions


def read_pubtator_documents(path: Path) -> dict[str, str]:
    """``PMID -> text`` of a PubTator file, documents in file order (see the module doc)."""
    lines: dict[str, list[str]] = {}
    for line in read_lines(path):
        if TEXT_LINE.match(line):
            doc_id, _kind, text = line.split("|", 2)
            lines.setdefault(doc_id.strip(), []).append(text)
    return {doc_id: "\n".join(texts) for doc_id, texts in lines.items()}
