"""The union of several detectors' spans, with their overlaps resolved.

:func:`merge_spans` is the rule that turns the dictionary detector's and the tagger's spans
into one list; :func:`select_disjoint` is the greedy choice under it, which the windows
reuse to keep a mention seen by two windows once.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import replace
from typing import TypeVar

from termnorm.annotate.spans import Span

__all__ = ["DETECTOR_ORDER", "join_detectors", "merge_spans", "select_disjoint"]

DETECTOR_ORDER = ("dictionary", "tagger")
"""The order of detector names in a merged span's ``detector``; other names follow these,
in alphabetical order."""

T = TypeVar("T")


def merge_spans(spans: Iterable[Span]) -> list[Span]:
    """One list from the spans of several detectors over ONE text, sorted by ``(start, end)``.

    - **Identical offsets** become one span: ``detector`` names every detector that found it,
      joined by ``+`` in :data:`DETECTOR_ORDER` (``"dictionary+tagger"``), and
      ``concept_ids`` is the union (in that order, first occurrence kept).
    - **Overlapping spans** (partial or nested) keep one: the span of the detector first in
      :data:`DETECTOR_ORDER` wins (a dictionary span, a name written in the text, over a
      tagger's guess at the same words: the tagger adds only what the dictionary misses);
      between spans of one detector the longer, so the outer span of a nested pair; between
      equal lengths, the one with ``concept_ids``, then the one that starts first. The
      choice is greedy in that order: a span is kept when it overlaps no span kept before
      it, so in a chain ``A``-``B``-``C`` where ``B`` loses to ``A``, ``C`` may stay. A span
      found by several detectors ranks as the first of them.
    - Spans that only touch (``a.end == b.start``) do not overlap; both stay.

    Raises ``ValueError`` when two spans share offsets but not text: they come from
    different texts, and merging them would be meaningless.
    """
    merged = [_merge_identical(group) for group in _group_by_offsets(spans)]
    return select_disjoint(merged, key=_merge_priority, span=lambda item: item)


def select_disjoint(
    items: Sequence[T],
    *,
    key: Callable[[T], tuple[int, ...]],
    span: Callable[[T], Span],
    group: Callable[[T], Hashable] | None = None,
) -> list[T]:
    """The items whose spans overlap no other kept one, chosen greedily by ascending ``key``
    (an item is kept when it overlaps none kept before it); sorted by ``(start, end)``.

    With ``group``, only items of different groups exclude each other: two items of one
    group are both kept however they overlap.
    """
    kept: list[T] = []  # sorted by start, so only a few neighbours need a look
    starts: list[int] = []
    longest = 0
    for item in sorted(items, key=key):
        here = span(item)
        low = bisect.bisect_right(starts, here.start - longest)
        high = bisect.bisect_left(starts, here.end)
        if not any(
            _overlap(here, span(other)) and (group is None or group(item) != group(other))
            for other in kept[low:high]
        ):
            at = bisect.bisect_right(starts, here.start)
            starts.insert(at, here.start)
            kept.insert(at, item)
            longest = max(longest, here.end - here.start)
    return sorted(kept, key=lambda item: (span(item).start, span(item).end))


def join_detectors(names: Iterable[str]) -> str:
    """``names`` (each possibly already joined by ``+``) as one ``+``-joined name, each once,
    in :data:`DETECTOR_ORDER`, other names after those in alphabetical order."""
    parts = {part for name in names for part in name.split("+")}
    known = [name for name in DETECTOR_ORDER if name in parts]
    return "+".join(known + sorted(parts.difference(DETECTOR_ORDER)))


def _group_by_offsets(spans: Iterable[Span]) -> list[list[Span]]:
    groups: dict[tuple[int, int], list[Span]] = {}
    for item in spans:
        groups.setdefault((item.start, item.end), []).append(item)
    return list(groups.values())


def _merge_identical(group: list[Span]) -> Span:
    """One span for spans at the same offsets (see :func:`merge_spans`)."""
    first = group[0]
    texts = {item.text for item in group}
    if len(texts) > 1:
        raise ValueError(
            f"spans at {first.start}..{first.end} have different texts {sorted(texts)}: "
            "merge only the spans of one text"
        )
    if len(group) == 1:
        return first
    detector = join_detectors(item.detector for item in group)
    ordered = sorted(group, key=lambda item: _detector_rank(item.detector))
    ids = tuple(dict.fromkeys(cid for item in ordered for cid in item.concept_ids))
    query = next((item.query for item in ordered if item.query), "")
    return replace(first, detector=detector, concept_ids=ids, query=query)


def _detector_rank(name: str) -> tuple[int, str]:
    first = name.split("+")[0]
    rank = DETECTOR_ORDER.index(first) if first in DETECTOR_ORDER else len(DETECTOR_ORDER)
    return rank, name


def _merge_priority(item: Span) -> tuple[int, ...]:
    """The first detector in the order first, then longer, with concept ids, earlier start."""
    rank = _detector_rank(item.detector)[0]
    return (rank, item.start - item.end, 0 if item.concept_ids else 1, item.start)


def _overlap(a: Span, b: Span) -> bool:
    return a.start < b.end and b.start < a.end
