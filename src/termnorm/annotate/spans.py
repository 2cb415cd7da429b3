"""A mention found in a text, and what finds them.

Offsets are code-point offsets into the original text (Python ``str`` indices), so
``text[span.start:span.end] == span.text`` holds for any text: CRLF line ends, emoji,
combining marks and NBSP included. A detector never rewrites the text it reports on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

__all__ = ["Detector", "Span"]


@dataclass(frozen=True, order=True)
class Span:
    """``text[start:end]``, found by ``detector`` (``"dictionary"``, ``"tagger"``, or both
    joined by ``+`` after merging); ``concept_ids``: the concepts whose dictionary term
    matched (empty for a tagger span, which names no concept); ``query``: the text the
    normalizer searches instead of ``text`` (a misspelling corrected,
    :mod:`termnorm.annotate.fuzzy`; a coordination's conjunct read as the name it makes,
    :mod:`termnorm.annotate.coordination`; empty: ``text`` itself); ``query_source``: the
    rule that made ``query``, named in the provenance (empty: spelling)."""

    start: int
    end: int
    text: str
    detector: str
    concept_ids: tuple[str, ...] = ()
    query: str = field(default="", compare=False)
    query_source: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if not 0 <= self.start < self.end:
            raise ValueError(f"a span needs 0 <= start < end, got {self.start}..{self.end}")
        if len(self.text) != self.end - self.start:
            raise ValueError(
                f"span text {self.text!r} is not {self.end - self.start} characters long"
            )


class Detector(Protocol):
    """Finds mention spans in a text; ``name`` is what its spans carry as ``detector``."""

    name: str

    def detect(self, text: str) -> list[Span]:
        """Every mention of ``text``, sorted by ``(start, end)``, each with
        ``text[span.start:span.end] == span.text``."""
        ...
