"""Link prediction with a trained relation head: rank every KG concept as the tail of (h, r, ?).

For each evaluated triplet (h, r, t) every concept c ≠ h is scored by S_rel(h, r, c) (the
head saved by ``termnorm train`` in ``MODEL_DIR/relations/``: cos(M_rᵀ e_h, e_c) or
−‖ê_h + r − ê_c‖). The rank of t is ``1 + #{c: S > S_t} + #{c ≠ t: S = S_t} / 2`` (ties
count half, the "realistic" rank). In the *filtered* setting (default) the other known tails
of (h, r) in the KG or among the evaluated triplets are removed from the candidates first
(:func:`~termnorm.evaluation.linkpred_compare.compare_link_prediction` ranks). Reported::

    hits@1, hits@3, hits@10 = share of ranks ≤ 1, 3, 10;  MR = mean rank;  MRR = mean 1/rank

The evaluated triplets are a seeded ``test_fraction`` sample of the KG's triplets, or the
``triplets`` given explicitly. For a held-out reading pass a KG (or ``triplets``) whose
relations were not used to train the model.
"""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from termnorm.errors import EmptyResultError
from termnorm.evaluation.embedding import ConceptVector, Embedder, EmbeddingEvaluator, seeded_split
from termnorm.evaluation.linkpred_compare import (
    EncoderTailScorer,
    RelationScorer,
    compare_link_prediction,
    rank_metrics,
)
from termnorm.evaluation.metric_names import prefixed
from termnorm.evaluation.relation_classification import triplets_of
from termnorm.kg import KnowledgeGraph

__all__ = ["LinkPredictionEvaluator", "RelationScorer", "rank_metrics"]

logger = logging.getLogger(__name__)


class LinkPredictionEvaluator(EmbeddingEvaluator):
    """Rank tails by S_rel over held-out triplets.

    Args:
        kg: candidate tails (every concept) and the known triplets (for filtering).
        relation_head: a scorer; default: ``RelationHead.load(model.path)`` at call time.
        filtered: remove the other known tails of (h, r) from the candidates.
        test_fraction: share of the KG's triplets evaluated (seeded) when ``triplets`` is None.
        max_triplets: at most this many evaluated triplets (seeded sample).
        triplets: explicit (head, relation, tail) rows to evaluate instead.
        vectors: ``name`` or ``mean`` concept vectors.
        seed: seed of the samples.
        name: metric prefix.
    """

    primary = "mrr"

    def __init__(
        self,
        kg: KnowledgeGraph,
        relation_head: RelationScorer | None = None,
        filtered: bool = True,
        test_fraction: float = 0.2,
        max_triplets: int | None = 2000,
        triplets: pd.DataFrame | None = None,
        vectors: ConceptVector | str = ConceptVector.NAME,
        batch_size: int = 256,
        seed: int = 0,
        name: str = "linkpred",
    ) -> None:
        self.kg = kg
        self.relation_head = relation_head
        self.filtered = filtered
        self.vectors = ConceptVector(vectors)
        self.batch_size = batch_size
        self.name = name
        self.known, _ = triplets_of(kg)
        if triplets is None:
            if len(self.known) < 2:
                raise EmptyResultError(
                    f"link prediction needs relation triplets; the KG has {len(self.known)}"
                )
            _, test = seeded_split(len(self.known), test_fraction, seed)
            triplets = self.known.iloc[test]
        if max_triplets is not None and len(triplets) > max_triplets:
            keep = np.random.default_rng(seed).choice(len(triplets), max_triplets, replace=False)
            triplets = triplets.iloc[np.sort(keep)]
        self.triplets = triplets.reset_index(drop=True)

    def evaluate(self, model: Embedder) -> dict[str, float]:
        """Unprefixed metrics: hits@k, mr, mrr, triplets (evaluated), dropped (those with a
        relation the head does not know, or an end that is not an embeddable KG concept)."""
        scorer = EncoderTailScorer(model, self.kg, self.vectors, head=self.relation_head)
        result = compare_link_prediction(
            self.kg, {self.name: scorer}, self.triplets, self.filtered, self.batch_size
        )
        if result.dropped:
            logger.warning("link prediction: %d triplets dropped", result.dropped)
        counts = {"triplets": float(result.triplets), "dropped": float(result.dropped)}
        return {**result.metrics[self.name], **counts}

    def __call__(self, model: Embedder) -> dict[str, float]:
        """Metrics of ``model``, prefixed with ``name`` (:meth:`evaluate` gives them flat)."""
        return prefixed(self.name, self.evaluate(model))
