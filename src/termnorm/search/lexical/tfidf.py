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
from termnorm.search.lexical.dictionary import normalize_text

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
        rows = self.vectorizer.fit_transform(self.dictionary.norm_terms).tocsr()  # [T, V]
        self.term_rows = rows
        self.term_vectors = rows.T.tocsr()  # [V, T]
        self._concept_index = {cid: i for i, cid in enumerate(self.dictionary.concept_ids)}

    def score_block(self, queries: Sequence[str]) -> np.ndarray:
        """Cosines ``[B, T]`` between the queries' and the terms' TF-IDF vectors."""
        q = self.vectorizer.transform(queries)  # [B, V] sparse, rows L2-normalized
        return np.asarray((q @ self.term_vectors).toarray(), dtype=np.float32)

    def concept_scores(self, query: str, concept_ids: Sequence[str]) -> np.ndarray:
        """float32 ``[len(concept_ids)]``: each concept's best TF-IDF cosine with ``query``
        (normalized here, as :meth:`normalize_batch` does); 0 for a concept without terms."""
        out = np.zeros(len(concept_ids), dtype=np.float32)
        known = [
            (j, self._concept_index[c])
            for j, c in enumerate(concept_ids)
            if c in self._concept_index
        ]
        if not known:
            return out
        d = self.dictionary
        ends = np.r_[d.starts[1:], len(d)]
        spans = [np.arange(d.starts[c], ends[c]) for _j, c in known]
        rows = np.concatenate(spans)
        q = self.vectorizer.transform([normalize_text(query)])  # [1, V]
        scores = np.asarray((self.term_rows[rows] @ q.T).toarray()).ravel()  # [n_rows]
        bounds = np.cumsum([0] + [len(s) for s in spans])
        for (j, _c), lo, hi in zip(known, bounds[:-1], bounds[1:], strict=True):
            out[j] = scores[lo:hi].max()
        return out
