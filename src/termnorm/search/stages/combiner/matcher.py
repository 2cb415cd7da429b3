"""The combined matcher: a recall stage's top ``k_c`` reordered by the learned combiner's
probability (:mod:`termnorm.search.stages.combiner.model`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from termnorm.search.candidate import OverRecall, RowMatcher, RowResult
from termnorm.search.lexical.tfidf import TfidfMatcher
from termnorm.search.space_matcher import abstained
from termnorm.search.stages.combiner.model import Combiner, RankerLike, feature_rows, reorder

__all__ = ["CombinedMatcher"]


class CombinedMatcher(OverRecall):
    """A recall matcher whose top ``k_c`` are reordered by the combiner's probability.

    ``tfidf``: the TF-IDF matcher over the recall's texts (the hybrid recall's own sparse side,
    or :func:`~termnorm.search.stages.hybrid.matcher.space_kg`'s); ``ranker``: required when the combiner
    uses the ranker logit. ``min_probability``: abstain below it (``min_score`` of commands).
    """

    def __init__(
        self,
        recall: RowMatcher,
        combiner: Combiner,
        tfidf: TfidfMatcher,
        k_c: int = 10,
        ranker: RankerLike | None = None,
        min_probability: float | None = None,
    ) -> None:
        if combiner.uses_ranker and ranker is None:
            raise ValueError("this combiner was fitted with a ranker: give the ranker")
        if k_c < 1:
            raise ValueError(f"k_c must be >= 1, got {k_c}")
        self.recall = recall
        self.combiner = combiner
        self.tfidf = tfidf
        self.k_c = k_c
        self.ranker = ranker if combiner.uses_ranker else None
        self.min_probability = min_probability
        self.name = f"{recall.name}+combiner"

    @property
    def index(self) -> Any:
        """The recall stage's index."""
        return getattr(self.recall, "index", None)

    def rerank_rows(
        self, texts: Sequence[object], recalled: Sequence[RowResult], k: int = 5
    ) -> list[RowResult]:
        """``recalled`` reordered by the combiner's probability, cut to ``k`` (module doc)."""
        rows = [i for i, r in enumerate(recalled) if r.candidates]
        out = list(recalled)
        if not rows:
            return out
        queries = [str(texts[i]).strip() for i in rows]
        lists = [recalled[i].candidates for i in rows]
        features = feature_rows(queries, lists, self.tfidf, self.ranker)
        for row, cands, (x, ranker_p) in zip(rows, lists, features, strict=True):
            ranked, _ = reorder(cands, self.combiner.predict(x), ranker_p)
            out[row] = abstained(ranked[:k], self.min_probability, "has probability")
        return out
