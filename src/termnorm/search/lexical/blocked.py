"""Base of the lexical matchers that score every query against every term, in blocks."""

from __future__ import annotations

import logging
from abc import abstractmethod
from collections.abc import Sequence

import numpy as np

from termnorm.kg.graph import KnowledgeGraph
from termnorm.search.candidate import Candidate
from termnorm.search.lexical.dictionary import LexicalMatcherBase, normalize_text

__all__ = ["DEFAULT_BLOCK_CELLS", "BlockedMatcher"]

logger = logging.getLogger(__name__)

DEFAULT_BLOCK_CELLS = 1 << 25  # query × term scores held at once (float32: 128 MiB)


class BlockedMatcher(LexicalMatcherBase):
    """Scores a block of queries against all terms, then ranks concepts (max over terms).

    ``block_cells`` bounds memory: a block holds ``max(1, block_cells // n_terms)`` queries.
    """

    def __init__(self, kg: KnowledgeGraph, block_cells: int = DEFAULT_BLOCK_CELLS) -> None:
        super().__init__(kg)
        self.block_size = max(1, block_cells // len(self.dictionary))

    @abstractmethod
    def score_block(self, queries: Sequence[str]) -> np.ndarray:
        """float32 ``[len(queries), n_terms]`` similarities of normalized queries to terms."""

    def normalize_batch(self, texts: Sequence[str], k: int = 5) -> list[list[Candidate]]:
        """Top-``k`` concepts per text, best first (see the dictionary's ranking rule)."""
        queries = [normalize_text(t) for t in texts]
        out: list[list[Candidate]] = []
        for start in range(0, len(queries), self.block_size):
            block = queries[start : start + self.block_size]
            logger.debug("%s: block of %d queries at %d", self.name, len(block), start)
            out.extend(self.dictionary.rank(self.score_block(block), k))
        return out
