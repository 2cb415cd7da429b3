"""Clustering pairs (CODER++; contrastive-KGE Italian paper, table 5a).

Two terms are predicted synonyms when cos(e_a, e_b) ≥ θ; the truth is "same KG concept".
Over all unordered pairs of the terms of a set of concepts::

    P = TP / (TP + FP),  R = TP / (TP + FN),  F1 = 2PR / (P + R)

θ is swept over 0.60, 0.61, ..., 0.98. The concepts are split (seeded, by concept, so no
synonym pair straddles the split) into a *tuning* part, where θ is chosen as the argmax of F1,
and a *held-out* part, where P/R/F1 are reported at that θ (``clustering_f1``, primary). For
big KGs each part is a seeded sample of at most ``max_concepts`` concepts: every positive pair
within the sample is kept and every pair among its terms is a candidate.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from termnorm.errors import EmptyResultError
from termnorm.evaluation.embedding import Embedder, EmbeddingEvaluator, encode_texts, seeded_split
from termnorm.kg import KnowledgeGraph

__all__ = ["DEFAULT_THRESHOLDS", "ClusteringEvaluator", "ClusteringResult", "PairSweep"]

DEFAULT_THRESHOLDS: tuple[float, ...] = tuple(round(0.60 + 0.01 * i, 2) for i in range(39))


@dataclass
class PairSweep:
    """Precision, recall and F1 at each θ on one split."""

    thresholds: list[float]
    precision: list[float]
    recall: list[float]
    f1: list[float]
    terms: int
    positive_pairs: int
    pairs: int

    def best(self) -> int:
        """Index of the θ with the highest F1 (the lowest such θ on ties)."""
        return int(np.argmax(self.f1))


@dataclass
class ClusteringResult:
    """θ chosen on the tuning split, scores on the held-out split, and both sweeps."""

    threshold: float
    precision: float
    recall: float
    f1: float
    tune: PairSweep
    test: PairSweep
    skipped_terms: int

    def metrics(self) -> dict[str, float]:
        """Flat metrics without prefix."""
        return {
            "f1": self.f1,
            "precision": self.precision,
            "recall": self.recall,
            "threshold": self.threshold,
            "tune_f1": self.tune.f1[self.tune.best()],
            "test_pairs": float(self.test.pairs),
            "test_positive_pairs": float(self.test.positive_pairs),
        }

    def to_dict(self) -> dict[str, object]:
        """JSON-ready details (both sweeps)."""
        return {
            **self.metrics(),
            "skipped_terms": self.skipped_terms,
            "tune": self.tune.__dict__,
            "test": self.test.__dict__,
        }


def sweep(
    vectors: np.ndarray,
    labels: np.ndarray,
    thresholds: tuple[float, ...] | list[float],
    block: int = 512,
) -> PairSweep:
    """P/R/F1 of "cos ≥ θ ⇒ same label" over all unordered pairs of rows, for every θ.

    Pairs are counted per block of rows (memory ``block × n``), bucketed by threshold.
    """
    n = len(labels)
    # small tolerance so cos = 0.9 stored as 0.8999999 still counts at θ = 0.9
    cuts = np.asarray(thresholds, dtype=np.float64) - 1e-6
    all_counts = np.zeros(len(cuts) + 1, dtype=np.int64)
    pos_counts = np.zeros(len(cuts) + 1, dtype=np.int64)
    for start in range(0, n, block):
        stop = min(start + block, n)
        sims = vectors[start:stop] @ vectors.T  # [b, n]
        upper = np.arange(n)[None, :] > np.arange(start, stop)[:, None]  # pairs i < j
        same = labels[start:stop, None] == labels[None, :]
        bucket = np.searchsorted(cuts, sims[upper], side="right")
        all_counts += np.bincount(bucket, minlength=len(cuts) + 1)
        pos_bucket = np.searchsorted(cuts, sims[upper & same], side="right")
        pos_counts += np.bincount(pos_bucket, minlength=len(cuts) + 1)
    # a pair with bucket b passes every θ_j with j < b: counts at θ_j = Σ_{b > j}
    predicted = np.cumsum(all_counts[::-1])[::-1][1:]
    true_pos = np.cumsum(pos_counts[::-1])[::-1][1:]
    n_pos = int(pos_counts.sum())
    precision, recall, f1 = [], [], []
    for tp, pred in zip(true_pos.tolist(), predicted.tolist(), strict=True):
        p = tp / pred if pred else 0.0
        r = tp / n_pos if n_pos else 0.0
        precision.append(p)
        recall.append(r)
        f1.append(2 * p * r / (p + r) if p + r > 0 else 0.0)
    return PairSweep(
        [float(t) for t in thresholds], precision, recall, f1, n, n_pos, int(all_counts.sum())
    )


class ClusteringEvaluator(EmbeddingEvaluator):
    """Synonym detection by a cosine threshold, θ tuned and scored on disjoint concepts.

    Args:
        kg: the concepts and their terms (synonyms = terms of one concept).
        thresholds: θ values to sweep (default 0.60..0.98 by 0.01).
        tune_fraction: share of concepts used to choose θ.
        max_concepts: at most this many concepts per split (seeded sample); ``None`` = all.
        seed: seed of the split and the samples.
        name: metric prefix.
    """

    primary = "f1"  # held-out split, θ from the tuning split

    def __init__(
        self,
        kg: KnowledgeGraph,
        thresholds: tuple[float, ...] | list[float] = DEFAULT_THRESHOLDS,
        tune_fraction: float = 0.5,
        max_concepts: int | None = 1000,
        seed: int = 0,
        name: str = "clustering",
    ) -> None:
        self.kg = kg
        self.thresholds = sorted(thresholds)
        if not self.thresholds:
            raise ValueError("thresholds must not be empty")
        self.tune_fraction = tune_fraction
        self.max_concepts = max_concepts
        self.seed = seed
        self.name = name
        self.tune_concepts, self.test_concepts = self.split()

    def split(self) -> tuple[list[str], list[str]]:
        """Seeded, disjoint ``(tune, test)`` concept lists, each capped at ``max_concepts``."""
        ids = sorted(set(self.kg.terms["concept_id"]))
        if len(ids) < 4:
            raise EmptyResultError(
                f"clustering needs at least 4 concepts with terms, the KG has {len(ids)}"
            )
        tune_idx, test_idx = seeded_split(len(ids), 1.0 - self.tune_fraction, self.seed)
        rng = np.random.default_rng(self.seed + 1)
        parts = []
        for idx in (tune_idx, test_idx):
            if self.max_concepts is not None and len(idx) > self.max_concepts:
                idx = np.sort(rng.choice(idx, self.max_concepts, replace=False))
            parts.append([ids[i] for i in idx])
        return parts[0], parts[1]

    def _terms(self, concepts: list[str]) -> tuple[list[str], np.ndarray]:
        """Distinct (case-insensitive) terms of each concept, with integer concept labels."""
        by_concept = self.kg.terms_by_concept()
        texts: list[str] = []
        labels: list[int] = []
        for label, cid in enumerate(concepts):
            seen: set[str] = set()
            for term in by_concept.get(cid, []):
                key = " ".join(str(term).casefold().split())
                if key and key not in seen:
                    seen.add(key)
                    texts.append(term)
                    labels.append(label)
        return texts, np.asarray(labels, dtype=np.int64)

    def _sweep(self, model: Embedder, concepts: list[str]) -> tuple[PairSweep, int]:
        texts, labels = self._terms(concepts)
        vectors, mask = encode_texts(model, texts)
        result = sweep(vectors[mask], labels[mask], self.thresholds)
        if result.positive_pairs == 0:
            raise EmptyResultError(
                "no synonym pair in the sampled concepts: the KG needs concepts with at least "
                "two distinct terms for the clustering evaluation"
            )
        return result, int((~mask).sum())

    def evaluate(self, model: Embedder) -> ClusteringResult:
        """Sweep θ on the tuning concepts, then score the held-out concepts at the best θ."""
        tune, skipped_tune = self._sweep(model, self.tune_concepts)
        best = tune.best()
        test, skipped_test = self._sweep(model, self.test_concepts)
        return ClusteringResult(
            threshold=tune.thresholds[best],
            precision=test.precision[best],
            recall=test.recall[best],
            f1=test.f1[best],
            tune=tune,
            test=test,
            skipped_terms=skipped_tune + skipped_test,
        )
