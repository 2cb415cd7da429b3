"""Recall, then rank: any row matcher's candidates reordered by a trained ranker.

:class:`RankedMatcher` wraps a recall :class:`~termnorm.search.candidate.RowMatcher` and a
:class:`~termnorm.search.rank.Ranker`. For each usable query it recalls ``k_c`` candidates (at
least ``k``), scores them with the ranker (one batch per mention) and orders them as ``mode``
(:class:`~termnorm.search.stages.ranker.fusion.RankMode`) says: ``fused`` by
s = w·sc + (1 − w)·sr (:func:`~termnorm.search.stages.ranker.fusion.fuse`), ``rank`` by the
ranker's probability, ``recall`` in recall order without the ranker (the ablation baseline),
``learned`` (the default when the ranker folder carries a combiner, else ``fused``) by the
combiner's probability (:class:`~termnorm.search.stages.combiner.model.Combiner`), with
``min_probability`` dropping candidates below it (a row left empty abstains, saying so).
Ties keep the recall order, and a recall top that matches the query exactly stays first
(:mod:`~termnorm.search.stages.ranker.deference`). The top ``k`` are returned, ranks
renumbered, each keeping ``recall_score``, ``ranker_score`` and ``score`` (what it was
ordered by).

With an ``implication`` predictor each answered row also gets ``implication`` (x) and
``concept_ids``, the codes :func:`~termnorm.search.stages.ranker.fusion.select_codes` chooses
(top x; for x = 3 also every further candidate scoring above ``theta``). Rows the recall
stage refuses or abstains on pass through as they are.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np

from termnorm.search.candidate import Candidate, OverRecall, RowMatcher, RowResult
from termnorm.search.lexical.tfidf import TfidfMatcher
from termnorm.search.space_matcher import abstained
from termnorm.search.stages.combiner.model import candidate_features, reorder, tfidf_of
from termnorm.search.stages.ranker.deference import defer_to_exact
from termnorm.search.stages.ranker.fusion import (
    DEFAULT_FUSION_WEIGHT,
    DEFAULT_K_C,
    DEFAULT_THETA,
    RankMode,
    fuse,
    select_codes,
)
from termnorm.search.stages.ranker.implication import ImplicationLike
from termnorm.search.stages.ranker.ranker import Ranker

__all__ = ["RankedMatcher", "default_mode"]

logger = logging.getLogger(__name__)


def default_mode(ranker: Ranker) -> RankMode:
    """``learned`` when the ranker folder carries a combiner, else the paper's ``fused``."""
    return RankMode.LEARNED if ranker.combiner is not None else RankMode.FUSED


class RankedMatcher(OverRecall):
    """A recall matcher followed by a ranker (module doc); itself a row matcher.

    ``tfidf``: the learned mode's TF-IDF matcher (default: over the recall's texts).
    Raises (at construction) :class:`~termnorm.errors.ArtifactMismatchError` when the recall
    matcher searches an index other than the one the ranker was trained on, and
    ``ValueError`` for ``k_c < 1``, a fusion weight outside [0, 1], the learned mode without
    a combiner, or a probability threshold outside the learned mode.
    """

    def __init__(
        self,
        recall: RowMatcher,
        ranker: Ranker,
        k_c: int = DEFAULT_K_C,
        mode: RankMode | str | None = None,
        weight: float = DEFAULT_FUSION_WEIGHT,
        theta: float = DEFAULT_THETA,
        implication: ImplicationLike | None = None,
        min_probability: float | None = None,
        tfidf: TfidfMatcher | None = None,
    ) -> None:
        if k_c < 1:
            raise ValueError(f"k_c must be >= 1, got {k_c}")
        if not 0.0 <= weight <= 1.0:
            raise ValueError(f"the fusion weight must be in [0, 1], got {weight}")
        index = getattr(recall, "index", None)
        if index is not None:
            ranker.check_index(index)
        trained = ranker.card.get("strategy")
        if trained is not None and trained != recall.name:
            logger.warning(
                "the ranker was trained on candidates of %s; recalling with %s",
                trained,
                recall.name,
            )
        self.recall = recall
        self.ranker = ranker
        self.k_c = k_c
        self.mode = default_mode(ranker) if mode is None else RankMode(mode)
        self.combiner = ranker.combiner if self.mode is RankMode.LEARNED else None
        if self.mode is RankMode.LEARNED and self.combiner is None:
            raise ValueError(
                f"the ranker {ranker.path or ''} carries no learned combiner: retrain it with "
                "'termnorm rank train --holdout 0.2', or choose --rank-mode fused"
            )
        if min_probability is not None and self.mode is not RankMode.LEARNED:
            raise ValueError("a probability threshold needs the learned mode (--rank-mode learned)")
        if self.combiner is not None and tfidf is None:
            tfidf = tfidf_of(recall)
        self.tfidf = tfidf
        self.min_probability = min_probability
        self.weight = weight
        self.theta = theta
        self.implication = implication
        self.name = f"{recall.name}+{ranker.name}[{self.mode.value}]"

    def rerank_rows(
        self, texts: Sequence[object], recalled: Sequence[RowResult], k: int = 5
    ) -> list[RowResult]:
        """The rank stage alone: ``recalled`` (the recall stage's rows for ``texts``, each
        with up to ``k_c`` candidates, as :meth:`normalize_rows` fetches them) reordered and
        cut to ``k``. The service uses it after encoding its queries in micro-batches."""
        if len(recalled) != len(texts):
            raise ValueError(f"{len(texts)} texts but {len(recalled)} recalled rows")
        rows = [i for i, r in enumerate(recalled) if r.candidates]
        if not rows:
            return list(recalled)
        queries = [str(texts[i]).strip() for i in rows]
        lists = [recalled[i].candidates for i in rows]
        if self.mode is RankMode.RECALL:
            scored = [reorder(c, np.array([x.score for x in c]), None) for c in lists]
        else:
            probs = self.ranker.score_batch(queries, lists)
            scored = [self._reorder(q, c, p) for q, c, p in zip(queries, lists, probs, strict=True)]
        implications = (
            np.asarray(self.implication.predict(queries), dtype=np.int64)
            if self.implication is not None
            else None
        )
        out = list(recalled)
        for j, (row, (candidates, scores)) in enumerate(zip(rows, scored, strict=True)):
            result = abstained(candidates[:k], self.min_probability, "has probability")
            if implications is not None and result.candidates:
                x = int(min(max(int(implications[j]), 1), 3))
                n = select_codes(scores, x, self.theta)
                result = result._replace(
                    implication=x, concept_ids=tuple(c.concept_id for c in candidates[:n])
                )
            out[row] = result
        return out

    # ------------------------------------------------------------------ internals
    def _reorder(
        self, query: str, candidates: list[Candidate], probs: np.ndarray
    ) -> tuple[list[Candidate], np.ndarray]:
        """``candidates`` (in recall order) ordered by the mode's learned score, the recall's
        exact match kept first (:func:`defer_to_exact`)."""
        return defer_to_exact(
            query, candidates, *reorder(candidates, self._learned(query, candidates, probs), probs)
        )

    def _learned(self, query: str, candidates: list[Candidate], probs: np.ndarray) -> np.ndarray:
        """The score the mode orders by: the combiner's probability, the ranker's, or fused."""
        if self.combiner is not None and self.tfidf is not None:
            return self.combiner.predict(candidate_features(query, candidates, self.tfidf, probs))
        if self.mode is RankMode.RANK:
            return probs
        return fuse(np.array([c.score for c in candidates]), probs, self.weight)
