"""Long documents cut into windows on sentence boundaries, and a detector run over them.

A window is ``text[start:end]`` of at most ``max_chars`` code points, made of whole
sentences (:func:`termnorm.annotate.sentences.sentence_spans`); a sentence longer than
``max_chars`` is cut into pieces on whitespace (or, inside a run of non-whitespace longer
than a window, hard at ``max_chars``, never just before a combining mark or joiner).

Overlap, so that a mention across a window edge is seen whole in one window:

- consecutive windows share their last ``overlap_sentences`` sentences (default one) where
  that still leaves room for the next sentence; a mention that a wrong sentence boundary
  cuts in two is whole in one of them;
- the piece after a cut inside a long sentence starts at the first word start at most
  ``overlap_chars`` characters before the cut, so a mention (starting on a word) of up to
  ``overlap_chars`` characters across the cut is whole in that piece.

:func:`detect_in_windows` runs one detector per window, shifts its spans back to document
offsets and keeps each mention once (the rule is in its docstring).
"""

from __future__ import annotations

import unicodedata
from dataclasses import replace
from typing import NamedTuple

from termnorm.annotate.merge import select_disjoint
from termnorm.annotate.sentences import sentence_spans
from termnorm.annotate.spans import Detector, Span

__all__ = [
    "DEFAULT_WINDOW_CHARS",
    "Window",
    "detect_in_windows",
    "max_chars_for_tokens",
    "text_windows",
]

_CHARS_PER_PIECE = 2
_SPECIAL_TOKENS = 2  # [CLS] and [SEP]


def max_chars_for_tokens(max_tokens: int) -> int:
    """Window size in characters for an encoder that reads ``max_tokens`` word pieces:
    two characters per word piece, after ``[CLS]`` and ``[SEP]``. A budget, not a bound
    (a run of punctuation can take one piece per character): the tagger still truncates."""
    if max_tokens <= _SPECIAL_TOKENS:
        raise ValueError(f"max_tokens must exceed {_SPECIAL_TOKENS}, got {max_tokens}")
    return _CHARS_PER_PIECE * (max_tokens - _SPECIAL_TOKENS)


DEFAULT_WINDOW_CHARS = max_chars_for_tokens(512)
"""1,020 characters: sized for a 512-token encoder (BERT, PubMedBERT, SapBERT)."""


class Window(NamedTuple):
    """``text[start:end]``: whole sentences, or a piece of one too long for a window."""

    start: int
    end: int


def text_windows(
    text: str,
    max_chars: int = DEFAULT_WINDOW_CHARS,
    *,
    overlap_sentences: int = 1,
    overlap_chars: int | None = None,
) -> list[Window]:
    """The windows of ``text``, in order, each at most ``max_chars`` long, starting and ending
    on non-whitespace; ``[]`` for a text of whitespace only. ``overlap_chars`` defaults to a
    fifth of ``max_chars`` (see the module docstring for both overlaps)."""
    chars = _check_sizes(max_chars, overlap_sentences, overlap_chars)
    units: list[tuple[int, int]] = []
    for start, end in sentence_spans(text):
        units.extend(_pieces(text, start, end, max_chars, chars))
    return _pack(units, max_chars, overlap_sentences)


def detect_in_windows(
    text: str,
    detector: Detector,
    *,
    max_chars: int = DEFAULT_WINDOW_CHARS,
    overlap_sentences: int = 1,
    overlap_chars: int | None = None,
) -> list[Span]:
    """``detector``'s spans over ``text``, found window by window (:func:`text_windows`),
    at document offsets, sorted by ``(start, end)``.

    A mention seen by two windows is kept once. Spans of different windows that overlap
    exclude each other, and the one kept is, in order: one that does not touch an inner
    window edge (a window edge other than the document's first and last character, where
    the window may have cut the mention), the longer, the earlier start, the earlier
    window. Spans of one window are kept as the detector gave them, overlapping or not.
    Merge the spans of several detectors with :func:`termnorm.annotate.merge.merge_spans`.

    Raises ``ValueError`` when the detector reports a span whose text is not the window's
    text at its offsets.
    """
    windows = text_windows(
        text, max_chars, overlap_sentences=overlap_sentences, overlap_chars=overlap_chars
    )
    if not windows:
        return []
    first, last = windows[0].start, windows[-1].end
    found: list[_Found] = []
    for index, window in enumerate(windows):
        for span in detector.detect(text[window.start : window.end]):
            shifted = _shift(text, span, window, detector.name)
            inner_start = shifted.start == window.start != first
            inner_end = shifted.end == window.end != last
            found.append(_Found(shifted, index, inner_start or inner_end))
    kept = select_disjoint(found, key=_window_priority, span=_span_of, group=_window_of)
    return [item.span for item in kept]


class _Found(NamedTuple):
    span: Span
    window: int
    at_inner_edge: bool


def _span_of(item: _Found) -> Span:
    return item.span


def _window_of(item: _Found) -> int:
    return item.window


def _window_priority(item: _Found) -> tuple[int, ...]:
    span = item.span
    return (int(item.at_inner_edge), span.start - span.end, span.start, item.window)


def _shift(text: str, span: Span, window: Window, name: str) -> Span:
    """``span`` of ``text[window.start:window.end]`` at document offsets, checked."""
    start, end = span.start + window.start, span.end + window.start
    if end > window.end or text[start:end] != span.text:
        raise ValueError(
            f"detector {name!r} reported {span.text!r} at {span.start}..{span.end} of a "
            f"window that has {text[start : min(end, window.end)]!r} there: a detector must "
            "report offsets into the text it is given, unchanged"
        )
    return replace(span, start=start, end=end)


def _check_sizes(max_chars: int, overlap_sentences: int, overlap_chars: int | None) -> int:
    """The overlap in characters to use, after checking the three sizes."""
    if max_chars < 1:
        raise ValueError(f"max_chars must be at least 1, got {max_chars}")
    if overlap_sentences < 0:
        raise ValueError(f"overlap_sentences must be 0 or more, got {overlap_sentences}")
    chars = max_chars // 5 if overlap_chars is None else overlap_chars
    if not 0 <= chars < max_chars:
        raise ValueError(
            f"overlap_chars must be at least 0 and less than max_chars={max_chars}, got {chars}"
        )
    return chars


def _pieces(text: str, start: int, end: int, max_chars: int, overlap: int) -> list[tuple[int, int]]:
    """``(start, end)`` cut into pieces of at most ``max_chars``, each after the first
    starting at the first word start at most ``overlap`` characters before the cut; one
    piece when it fits."""
    pieces = []
    while end - start > max_chars:
        cut = _cut(text, start, start + max_chars)
        pieces.append((start, cut))
        start = _resume(text, start, cut, overlap)
    pieces.append((start, end))
    return pieces


def _cut(text: str, start: int, limit: int) -> int:
    """The end of the last whole word of ``text[start:limit]`` (``text[limit]`` exists);
    with no whitespace there, ``limit`` moved back off combining marks and joiners."""
    space = limit
    while space > start and not text[space].isspace():
        space -= 1
    if space > start:
        while text[space - 1].isspace():
            space -= 1
        return space
    cut = limit
    while cut > start + 1 and _clings(text[cut]):
        cut -= 1
    return cut


def _clings(char: str) -> bool:
    """Whether ``char`` belongs with the character before it (combining mark, joiner,
    variation selector)."""
    return bool(unicodedata.combining(char)) or unicodedata.category(char) in {"Mn", "Me", "Cf"}


def _resume(text: str, start: int, cut: int, overlap: int) -> int:
    """Where the piece after ``text[start:cut]`` starts: the first word start at or after
    ``cut - overlap`` (and after ``start``), or ``cut`` itself after a hard cut."""
    index = max(start + 1, cut - overlap)
    while index < cut and not (text[index - 1].isspace() and not text[index].isspace()):
        index += 1
    while text[index].isspace():
        index += 1
    return index


def _pack(units: list[tuple[int, int]], max_chars: int, overlap: int) -> list[Window]:
    """Consecutive ``units`` packed greedily into windows of at most ``max_chars``; each
    window after the first repeats the last ``overlap`` units of the one before where the
    next unit still fits."""
    windows: list[Window] = []
    first = 0
    while first < len(units):
        after = first + 1
        while after < len(units) and units[after][1] - units[first][0] <= max_chars:
            after += 1
        windows.append(Window(units[first][0], units[after - 1][1]))
        if after == len(units):
            break
        first = max(first + 1, after - overlap)
        while first < after and units[after][1] - units[first][0] > max_chars:
            first += 1
    return windows
