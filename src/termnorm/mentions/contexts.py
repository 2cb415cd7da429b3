"""Self-supervised contextual mentions: KG terms found in running text by dictionary matching.

KRISSBERT (Zhang et al. 2022) and the Italian KGE paper (§3.1) train on *contexts*: every
place a KG term occurs in a text corpus becomes a mention of that term's concept, seen through
a fixed window of words around it, with markers around the mention::

    "... in patients with [M_s] renal cysts [M_e] and hepatic fibrosis ..."

Only dictionary matches are used — never a corpus's gold annotations. Matching
(:func:`find_mentions`): the text and every KG term are split into words (``\\w+`` runs and
single punctuation marks, case folded); at each word the longest term (in words) that starts
there is taken, and the scan continues after it. Terms shorter than ``min_chars`` characters,
and surfaces that belong to more than one concept (ambiguous: no self-supervised label), are
left out of the dictionary and counted.

Corpora (:func:`read_corpus`): files in a mention format that carries document text (PubTator
title + abstract, GSC+, PhenoBERT; see :func:`~termnorm.mentions.read_documents`), or plain
text (``format="text"``: each non-blank line one document). The annotations of a PubTator file
are not read here.

Two products: :func:`contextual_mentions` (one marked window per match, at most
``per_term`` per surface form, the paper's 4) for contrastive training, and
:func:`mention_passages` (sentences with all their matches as character spans) for KGE
injection pre-training.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from termnorm.errors import EmptyResultError, InputFormatError
from termnorm.kg.keywords import longest_first
from termnorm.mentions._lines import read_lines, require_exists
from termnorm.mentions.documents import DOCUMENT_FORMATS, read_documents
from termnorm.mentions.reader import detect_format, parse_format

if TYPE_CHECKING:
    from termnorm.kg import KnowledgeGraph

__all__ = [
    "MENTION_END",
    "MENTION_START",
    "TEXT_FORMAT",
    "ContextCorpus",
    "ContextMention",
    "MatchedSpan",
    "Passage",
    "TermDictionary",
    "contextual_mentions",
    "find_mentions",
    "mark_mention",
    "mention_passages",
    "read_corpus",
    "surface_key",
]

TEXT_FORMAT = "text"
"""The plain-text corpus format: each non-blank line is one document."""

MENTION_START = "[M_s]"  # the encoders' markers (termnorm.encoders.markers), kept import-free
MENTION_END = "[M_e]"
_WORD = re.compile(r"\w+|[^\w\s]")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\[])|\n+")


def _words(text: str) -> list[re.Match[str]]:
    return list(_WORD.finditer(text))


def surface_key(text: str) -> str:
    """The matching key of a surface form: its words, case folded, joined by one space."""
    return " ".join(m.group().casefold() for m in _WORD.finditer(text))


@dataclass
class TermDictionary:
    """Surface key → concept ID of the unambiguous terms (see the module doc).

    ``counts``: ``terms`` read, ``kept`` surfaces, ``short`` (under ``min_chars``) and
    ``ambiguous`` (several concepts) surfaces left out.
    """

    concept_of: dict[str, str]
    max_words: int
    counts: dict[str, int] = field(default_factory=dict)

    @classmethod
    def from_pairs(cls, pairs: Iterable[tuple[str, str]], min_chars: int = 3) -> TermDictionary:
        """From ``(term, concept_id)`` pairs."""
        owners: dict[str, set[str]] = {}
        read = short = 0
        for term, concept_id in pairs:
            read += 1
            key = surface_key(term)
            if len(key.replace(" ", "")) < min_chars:
                short += 1
                continue
            owners.setdefault(key, set()).add(concept_id)
        concept_of = {k: next(iter(v)) for k, v in owners.items() if len(v) == 1}
        max_words = max((k.count(" ") + 1 for k in concept_of), default=0)
        counts = {
            "terms": read,
            "kept": len(concept_of),
            "short": short,
            "ambiguous": len(owners) - len(concept_of),
        }
        return cls(concept_of, max_words, counts)

    @classmethod
    def from_kg(cls, kg: KnowledgeGraph, min_chars: int = 3) -> TermDictionary:
        """From every term of the KG's ``terms`` table."""
        pairs = zip(kg.terms["term"].astype(str), kg.terms["concept_id"].astype(str), strict=True)
        return cls.from_pairs(pairs, min_chars)


@dataclass(frozen=True, slots=True)
class MatchedSpan:
    """A dictionary match: ``text[start:end]`` is a surface form of ``concept_id``."""

    start: int
    end: int
    concept_id: str
    key: str  # the surface key of the matched term


def find_mentions(text: str, dictionary: TermDictionary) -> list[MatchedSpan]:
    """The longest-first, left-to-right, non-overlapping matches of ``dictionary`` in ``text``."""
    words = _words(text)
    keys = [w.group().casefold() for w in words]
    found = longest_first(
        len(words),
        dictionary.max_words,
        lambda i, n: dictionary.concept_of.get(" ".join(keys[i : i + n])),
    )
    return [
        MatchedSpan(words[i].start(), words[i + n - 1].end(), concept, " ".join(keys[i : i + n]))
        for i, n, concept in found
    ]


def mark_mention(text: str, start: int, end: int, words: int) -> str:
    """``left [M_s] mention [M_e] right`` with at most ``words`` words on each side."""
    left = [m for m in _WORD.finditer(text, 0, start)][-words:] if words else []
    right = [m for m in _WORD.finditer(text, end)][:words] if words else []
    before = text[left[0].start() : start].strip() if left else ""
    after = text[end : right[-1].end()].strip() if right else ""
    parts = [before, MENTION_START, text[start:end], MENTION_END, after]
    return " ".join(" ".join(p.split()) for p in parts if p)


@dataclass(frozen=True, slots=True)
class ContextMention:
    """One self-supervised mention: its concept, surface key, and marked context window."""

    doc_id: str
    start: int
    end: int
    concept_id: str
    key: str
    context: str


@dataclass
class ContextCorpus:
    """The contexts of a corpus and what was found (``documents``, ``matches``, ``kept``,
    ``over_per_term`` dropped by the per-term limit, ``concepts``, ``surfaces``)."""

    mentions: list[ContextMention]
    counts: dict[str, int]


def contextual_mentions(
    documents: Mapping[str, str],
    dictionary: TermDictionary,
    words: int = 8,
    per_term: int = 4,
    seed: int = 0,
) -> ContextCorpus:
    """Marked context windows of every dictionary match in ``documents``, at most
    ``per_term`` per surface key (a seeded random choice among its matches), in document
    order.

    Raises:
        EmptyResultError: no KG term occurs in the corpus.
    """
    if words < 0 or per_term < 1:
        raise ValueError(f"words must be >= 0 and per_term >= 1 (got {words}, {per_term})")
    found: list[tuple[str, MatchedSpan]] = [
        (doc_id, span)
        for doc_id, text in documents.items()
        for span in find_mentions(text, dictionary)
    ]
    if not found:
        raise EmptyResultError(
            f"no KG term occurs in the {len(documents)} corpus documents: pass a corpus in the "
            "KG's language and domain"
        )
    by_key: dict[str, list[int]] = {}
    for i, (_, span) in enumerate(found):
        by_key.setdefault(span.key, []).append(i)
    rng = np.random.default_rng(seed)
    keep = sorted(
        i
        for rows in by_key.values()
        for i in (rows if len(rows) <= per_term else rng.choice(rows, per_term, replace=False))
    )
    mentions = [
        ContextMention(
            doc_id,
            s.start,
            s.end,
            s.concept_id,
            s.key,
            mark_mention(documents[doc_id], s.start, s.end, words),
        )
        for doc_id, s in (found[int(i)] for i in keep)
    ]
    counts = {
        "documents": len(documents),
        "matches": len(found),
        "kept": len(mentions),
        "over_per_term": len(found) - len(mentions),
        "concepts": len({m.concept_id for m in mentions}),
        "surfaces": len(by_key),
    }
    return ContextCorpus(mentions, counts)


@dataclass(frozen=True, slots=True)
class Passage:
    """A stretch of text (a sentence, or part of a long one) and its dictionary matches, with
    offsets into ``text``."""

    text: str
    spans: tuple[MatchedSpan, ...]


def mention_passages(
    documents: Mapping[str, str], dictionary: TermDictionary, max_words: int = 48
) -> list[Passage]:
    """The sentences of ``documents`` (cut into pieces of at most ``max_words`` words, never
    inside a match) that hold at least one match, in document order."""
    if max_words < 1:
        raise ValueError(f"max_words must be at least 1 (got {max_words})")
    out: list[Passage] = []
    for text in documents.values():
        bounds = [0] + [m.end() for m in _SENTENCE_END.finditer(text)] + [len(text)]
        for lo, hi in itertools.pairwise(bounds):
            sentence = text[lo:hi]
            spans = find_mentions(sentence, dictionary)
            if spans:
                out.extend(_pieces(sentence, spans, max_words))
    return out


def _pieces(sentence: str, spans: Sequence[MatchedSpan], max_words: int) -> list[Passage]:
    """``sentence`` in pieces of at most ``max_words`` words (a match stays whole)."""
    words = _words(sentence)
    cuts: list[int] = [0]
    count = 0
    for w in words:
        inside = any(s.start < w.start() < s.end for s in spans)
        if count >= max_words and not inside:
            cuts.append(w.start())
            count = 0
        count += 1
    cuts.append(len(sentence))
    out = []
    for lo, hi in itertools.pairwise(cuts):
        inner = [s for s in spans if lo <= s.start and s.end <= hi]
        if not inner:
            continue
        piece = sentence[lo:hi]
        shift = len(piece) - len(piece.lstrip())
        text = piece.strip()
        moved = tuple(
            MatchedSpan(s.start - lo - shift, s.end - lo - shift, s.concept_id, s.key)
            for s in inner
        )
        out.append(Passage(text, moved))
    return out


def read_corpus(paths: Iterable[str | Path], format: str | None = None) -> dict[str, str]:
    """``doc_id -> text`` of corpus files (``doc_id`` prefixed by the file name when several
    files are read, so IDs stay distinct).

    ``format``: ``"text"`` (each non-blank line a document, ID ``file:line``), a mention format
    with document text, or None (detected per file; a file that is no known mention format
    must be given ``format="text"``).

    Raises:
        InputFormatError: a format without document text, or an undetectable file.
        EmptyResultError: no document.
    """
    files = [Path(require_exists(Path(p))) for p in paths]
    documents: dict[str, str] = {}
    for path in files:
        docs = _read_one(path, format)
        prefix = f"{path.name}:" if len(files) > 1 else ""
        documents.update({f"{prefix}{k}": v for k, v in docs.items()})
    if not documents:
        raise EmptyResultError(f"no document in the corpus files {', '.join(map(str, files))}")
    return documents


def _read_one(path: Path, format: str | None) -> dict[str, str]:
    if format == TEXT_FORMAT:
        if path.is_dir():
            raise InputFormatError(path, None, "a 'text' corpus is a file, not a folder")
        return {
            f"{path.name}:{n}": line.strip()
            for n, line in enumerate(read_lines(path), start=1)
            if line.strip()
        }
    try:
        fmt = detect_format(path) if format is None else parse_format(format)
    except InputFormatError as exc:
        raise InputFormatError(
            path,
            None,
            f"{exc}; for plain text (one document per line) pass the corpus format 'text'",
        ) from exc
    if fmt not in DOCUMENT_FORMATS:
        raise InputFormatError(
            path,
            None,
            f"format {fmt.value} holds no document text (corpus formats: {TEXT_FORMAT}, "
            f"{', '.join(sorted(f.value for f in DOCUMENT_FORMATS))})",
        )
    return read_documents(path, fmt)
