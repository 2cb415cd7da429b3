"""Link prediction with a trained relation head: rank every KG concept as the tail of (h, r, ?).

For each evaluated triplet (h, r, t) every concept c ≠ h is scored by S_rel(h, r, c) (the
head saved by ``termnorm train`` in ``MODEL_DIR/relations/``: cos(M_rᵀ e_h, e_c) or
−‖ê_h + r − ê_c‖). The rank of t is ``1 + #{c: S > S_t} + #{c ≠ t: S = S_t} / 2`` (ties
count half, the "realistic" rank). In the *filtered* setting (default) the other known tails
of (h, r) anywhere in the KG are removed from the candidates first. Reported::

    hits@1, hits@3, hits@10 = share of ranks ≤ 1, 3, 10;  MR = mean rank;  MRR = mean 1/rank

The evaluated triplets are a seeded ``test_fraction`` sample of the KG's triplets, or the
``triplets`` given explicitly. For a held-out reading pass a KG (or ``triplets``) whose
relations were not used to train the model.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Protocol

import numpy as np
import pandas as pd
import torch

from termnorm.errors import ArtifactMismatchError, EmptyResultError
from termnorm.evaluation.embedding import (
    ConceptVector,
    Embedder,
    EmbeddingEvaluator,
    concept_vectors,
    seeded_split,
)
from termnorm.evaluation.metric_names import prefixed
from termnorm.evaluation.relation_classification import triplets_of
from termnorm.kg import KnowledgeGraph

__all__ = ["LinkPredictionEvaluator", "RelationScorer", "rank_metrics"]

logger = logging.getLogger(__name__)

HITS_AT = (1, 3, 10)


class RelationScorer(Protocol):
    """What link prediction needs from a relation head (``losses.RelationHead`` has it)."""

    labels: list[str]

    def score(self, h: torch.Tensor, rel_idx: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        """S_rel for heads ``[B, d]`` with relation indices ``[B]`` against tails ``[N, d]``."""
        ...


def rank_metrics(ranks: np.ndarray) -> dict[str, float]:
    """hits@1/3/10, MR and MRR of 1-based (possibly fractional) ranks."""
    out = {f"hits@{k}": float((ranks <= k).mean()) for k in HITS_AT}
    out["mr"] = float(ranks.mean())
    out["mrr"] = float((1.0 / ranks).mean())
    return out


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

    def _head_for(self, model: Embedder) -> RelationScorer:
        if self.relation_head is not None:
            return self.relation_head
        path = getattr(model, "path", None)
        if path is None or not (Path(path) / "relations" / "config.json").is_file():
            raise ArtifactMismatchError(
                f"link prediction needs a model folder with a relation head (relations/), "
                f"as written by 'termnorm train' with a relation loss; {path or 'this model'} "
                "has none"
            )
        from termnorm.losses.relation_head import RelationHead

        return RelationHead.load(Path(path))

    def evaluate(self, model: Embedder) -> dict[str, float]:
        """Unprefixed metrics: hits@k, mr, mrr, triplets (evaluated), dropped."""
        head = self._head_for(model)
        label_index = {label: i for i, label in enumerate(head.labels)}
        ids, vecs, mask = concept_vectors(self.kg, model, self.vectors)
        head_dim = getattr(head, "dim", vecs.shape[1])
        if head_dim != vecs.shape[1]:
            raise ArtifactMismatchError(
                f"the relation head works on {head_dim}-d vectors but the model gives "
                f"{vecs.shape[1]}-d ones; use the model folder the head was trained with"
            )
        row = {cid: i for i, cid in enumerate(ids)}
        usable = self.triplets[
            self.triplets["relation"].isin(label_index)
            & self.triplets["head"].map(lambda c: c in row and bool(mask[row[c]]))
            & self.triplets["tail"].map(lambda c: c in row and bool(mask[row[c]]))
        ]
        dropped = len(self.triplets) - len(usable)
        if dropped:
            logger.warning(
                "link prediction: %d triplets dropped (relation unknown to the head, or an end "
                "that is not an embeddable KG concept)",
                dropped,
            )
        if len(usable) == 0:
            raise EmptyResultError(
                f"no triplet to rank: the head knows relations {head.labels[:10]}, none of the "
                "evaluated triplets uses one between embeddable concepts"
            )
        true_tails: dict[tuple[str, str], list[int]] = {}
        if self.filtered:
            for h, r, t in self.known.itertuples(index=False):
                if t in row:
                    true_tails.setdefault((h, r), []).append(row[t])
        candidates = torch.from_numpy(vecs)  # [N, d]
        invalid = torch.from_numpy(~mask)  # concepts without a vector are never candidates
        h_idx = np.array([row[h] for h in usable["head"]])
        t_idx = np.array([row[t] for t in usable["tail"]])
        r_idx = torch.tensor([label_index[r] for r in usable["relation"]], dtype=torch.long)
        ranks = np.empty(len(usable), dtype=np.float64)
        with torch.no_grad():
            for s in range(0, len(usable), self.batch_size):
                sl = slice(s, s + self.batch_size)
                scores = head.score(candidates[h_idx[sl]], r_idx[sl], candidates).float().cpu()
                scores[:, invalid] = -torch.inf
                rows = torch.arange(scores.shape[0])
                scores[rows, torch.from_numpy(h_idx[sl])] = -torch.inf  # never the head itself
                target = scores[rows, torch.from_numpy(t_idx[sl])].clone()  # [B]
                if self.filtered:
                    for b, (h, r) in enumerate(
                        zip(usable["head"].iloc[sl], usable["relation"].iloc[sl], strict=True)
                    ):
                        scores[b, true_tails.get((h, r), [])] = -torch.inf
                greater = (scores > target[:, None]).sum(-1)
                ties = (scores == target[:, None]).sum(-1)
                if not self.filtered:
                    ties = ties - 1  # the target itself
                ranks[sl] = (1 + greater + 0.5 * ties).numpy()
        out = rank_metrics(ranks)
        out["triplets"] = float(len(usable))
        out["dropped"] = float(dropped)
        return out

    def __call__(self, model: Embedder) -> dict[str, float]:
        """Metrics of ``model``, prefixed with ``name`` (:meth:`evaluate` gives them flat)."""
        return prefixed(self.name, self.evaluate(model))
