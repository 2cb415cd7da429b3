"""The fusion block (Liang et al. 2021, §3.3): recall and ranker scores → one order, and the
codes a mention gets.

For a mention m with recalled candidates c_1..c_k (k = k_c) and their recall cosines:

* d(m, c_i) = ‖m − c_i‖ between unit vectors = sqrt(max(0, 2 − 2·cos(m, c_i)));
* sc_i = 1 − d(m, c_i) / Σ_j d(m, c_j)   (every sc_i is 1 when every distance is 0);
* s_i = w · sc_i + (1 − w) · sr_i, with sr_i the ranker's probability and w the fusion
  weight (paper: w = 1/2, s = (sc + sr) / 2).

Multi-code output (paper formula 14), candidates sorted by s descending and x the predicted
implication number (1, 2, or 3 for "3 or more"): the top x codes when x < 3; when x = 3 the
top 3 plus every further candidate with s > θ (paper: θ = 0.8).

:class:`RankMode` names the orders: ``learned`` (the probability of the learned combiner the
ranker folder carries, :mod:`termnorm.search.stages.combiner.model`; the default when it has one),
and the paper's three compared in its ablations: ``recall`` (the recall order, no ranker),
``rank`` (by sr alone) and ``fused`` (by s).
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum

import numpy as np

from termnorm.search.stages.ranker.train_spec import DEFAULT_K_C

__all__ = [
    "DEFAULT_FUSION_WEIGHT",
    "DEFAULT_K_C",
    "DEFAULT_THETA",
    "MAX_IMPLICATION",
    "RankMode",
    "distances",
    "fuse",
    "recall_similarities",
    "select_codes",
]

DEFAULT_FUSION_WEIGHT = 0.5
DEFAULT_THETA = 0.8
MAX_IMPLICATION = 3


class RankMode(str, Enum):
    """Which score orders the candidates (module doc)."""

    RECALL = "recall"
    RANK = "rank"
    FUSED = "fused"
    LEARNED = "learned"


def distances(cosines: Sequence[float] | np.ndarray) -> np.ndarray:
    """Euclidean distances between unit vectors from their cosines (module doc)."""
    cos = np.asarray(cosines, dtype=np.float64)
    return np.sqrt(np.maximum(0.0, 2.0 - 2.0 * cos))


def recall_similarities(cosines: Sequence[float] | np.ndarray) -> np.ndarray:
    """sc_i = 1 − d_i / Σ_j d_j over one mention's candidates (module doc)."""
    d = distances(cosines)
    total = float(d.sum())
    if total <= 0.0:
        return np.ones_like(d)
    return 1.0 - d / total


def fuse(
    cosines: Sequence[float] | np.ndarray,
    ranker_scores: Sequence[float] | np.ndarray,
    weight: float = DEFAULT_FUSION_WEIGHT,
) -> np.ndarray:
    """s_i = w · sc_i + (1 − w) · sr_i (module doc); ``ValueError`` for w outside [0, 1] or
    lengths that differ."""
    if not 0.0 <= weight <= 1.0:
        raise ValueError(f"the fusion weight must be in [0, 1], got {weight}")
    sr = np.asarray(ranker_scores, dtype=np.float64)
    sc = recall_similarities(cosines)
    if sc.shape != sr.shape:
        raise ValueError(f"{len(sc)} recall scores but {len(sr)} ranker scores")
    return weight * sc + (1.0 - weight) * sr


def select_codes(
    scores: Sequence[float] | np.ndarray, implication: int, theta: float = DEFAULT_THETA
) -> int:
    """How many of the candidates (sorted by ``scores``, descending) to output: formula 14.

    ``implication`` is clipped to [1, 3]; at most ``len(scores)`` codes are chosen.
    """
    s = np.asarray(scores, dtype=np.float64)
    x = int(min(max(int(implication), 1), MAX_IMPLICATION))
    if x < MAX_IMPLICATION:
        return min(x, len(s))
    extra = int(np.sum(s[MAX_IMPLICATION:] > theta))
    return min(len(s), MAX_IMPLICATION + extra)
