"""Character n-gram TF-IDF nearest neighbour, the candidate generator of scispaCy's linker.

Terms and queries (normalized text) become TF-IDF vectors over character 3-grams taken
inside word boundaries (scikit-learn ``analyzer="char_wb"``, ``ngram_range=(3, 3)``), with
smoothed idf(g) = ln((1 + n) / (1 + df(g))) + 1 fitted on the KG's terms, L2-normalized; the
score is the cosine s(q, t) = v_q · v_t ∈ [0, 1].
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer

from termnorm.kg.graph import KnowledgeGraph
from termnorm.search.lexical.blocked import DEFAULT_BLOCK_CELLS, BlockedMatcher

__all__ = ["TfidfMatcher"]


class TfidfMatcher(BlockedMatcher):
    """Matcher ranking concepts by the char n-gram TF-IDF cosine of their best term."""

    name = "tfidf"

    def __init__(
        self,
        kg: KnowledgeGraph,
        ngram_range: tuple[int, int] = (3, 3),
        block_cells: int = DEFAULT_BLOCK_CELLS,
    ) -> None:
        super().__init__(kg, block_cells)
        self.vectorizer = TfidfVectorizer(
            analyzer="char_wb", ngram_range=ngram_range, lowercase=False, dtype=np.float32
        )
        self.term_vectors = self.vectorizer.fit_transform(self.dictionary.norm_terms).T.tocsr()

    def score_block(self, queries: Sequence[str]) -> np.ndarray:
        """Cosines ``[B, T]`` between the queries' and the terms' TF-IDF vectors."""
        q = self.vectorizer.transform(queries)  # [B, V] sparse, rows L2-normalized
        return np.asarray((q @ self.term_vectors).toarray(), dtype=np.float32)
