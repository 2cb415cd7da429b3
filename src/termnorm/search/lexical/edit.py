"""Edit-distance baseline: normalized Levenshtein similarity between query and term.

s(q, t) = 1 − lev(q, t) / max(|q|, |t|) on normalized text (1 = equal, 0 = nothing in
common), computed with ``rapidfuzz.process.cdist`` one block of queries at a time.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from rapidfuzz import process
from rapidfuzz.distance import Levenshtein

from termnorm.kg.graph import KnowledgeGraph
from termnorm.search.lexical.blocked import DEFAULT_BLOCK_CELLS, BlockedMatcher

__all__ = ["EditDistanceMatcher"]


class EditDistanceMatcher(BlockedMatcher):
    """Matcher ranking concepts by the normalized Levenshtein similarity of their best term.

    ``workers`` is passed to rapidfuzz (1 = this thread; -1 = every core).
    """

    name = "edit"

    def __init__(
        self, kg: KnowledgeGraph, workers: int = 1, block_cells: int = DEFAULT_BLOCK_CELLS
    ) -> None:
        super().__init__(kg, block_cells)
        self.workers = workers

    def score_block(self, queries: Sequence[str]) -> np.ndarray:
        """Normalized Levenshtein similarities ``[B, T]``."""
        return process.cdist(
            queries,
            self.dictionary.norm_terms,
            scorer=Levenshtein.normalized_similarity,
            dtype=np.float32,
            workers=self.workers,
        )
