"""A matcher's answers memoized per query text: :class:`RowMemo`.

An annotator searches the same span texts again and again (a name recurs within and across
documents); the memo answers a text seen before without searching, which is right by
construction while the memoized matcher's index and settings do not change.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence

from termnorm.search.candidate import RowAnswers, RowMatcher, RowResult

__all__ = ["DEFAULT_MEMO_TEXTS", "RowMemo"]

DEFAULT_MEMO_TEXTS = 8192
"""Query texts whose answers an annotator keeps (:class:`RowMemo`)."""


class RowMemo(RowAnswers):
    """``matcher``'s answers, each query text searched once: a text answered before is read
    from the memo (it keeps the ``maxsize`` texts last used), the others go to ``matcher`` in
    one ``normalize_rows`` call. Right by construction while ``matcher``'s index and settings
    do not change (an annotator's lifetime)."""

    def __init__(self, matcher: RowMatcher, maxsize: int = DEFAULT_MEMO_TEXTS) -> None:
        if maxsize < 1:
            raise ValueError(f"maxsize must be at least 1, got {maxsize}")
        self.matcher = matcher
        self.name = matcher.name
        self.maxsize = maxsize
        self._rows: OrderedDict[tuple[str, int], RowResult] = OrderedDict()
        self._lock = threading.Lock()

    def identity(self) -> dict[str, object]:
        """The memoized matcher's identity (the memo changes no answer)."""
        return self.matcher.identity()

    def alt_ids(self, concept_id: str) -> Sequence[str]:
        """Other IDs of a concept, from the memoized matcher."""
        return self.matcher.alt_ids(concept_id)

    def normalize_rows(self, texts: Sequence[object], k: int = 5) -> list[RowResult]:
        """One :class:`RowResult` per input, in order: the memoized matcher's answer."""
        with self._lock:
            out = [self._recall(t, k) if isinstance(t, str) else None for t in texts]
        todo = [i for i, row in enumerate(out) if row is None]
        if todo:
            fresh = self.matcher.normalize_rows([texts[i] for i in todo], k)
            with self._lock:
                for i, row in zip(todo, fresh, strict=True):
                    out[i] = row
                    if isinstance(text := texts[i], str):
                        self._rows[(text, k)] = row
                while len(self._rows) > self.maxsize:
                    self._rows.popitem(last=False)
        return [row for row in out if row is not None]

    def _recall(self, text: str, k: int) -> RowResult | None:
        """The answer kept for ``(text, k)`` (marked as last used), or ``None``."""
        row = self._rows.get((text, k))
        if row is not None:
            self._rows.move_to_end((text, k))
        return row
