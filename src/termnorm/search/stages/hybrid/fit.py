"""Fitting hybrid recall's weight on training candidates: ``termnorm rank hybrid``.

The training queries, their domain synonyms and the cross-fitting are
:mod:`termnorm.search.stages.crossfit`'s (a mention never finds its own document's entries).
For every training query the hybrid matcher (:class:`~termnorm.search.stages.hybrid.matcher.HybridMatcher`)
gives its merged candidates with their dense and sparse scores; the weight w of
h = w·d + (1 − w)·s is the one of :data:`WEIGHT_GRID` with the highest training acc@1 (ties:
the larger w, the one closer to the dense search alone). The card (a JSON file) keeps w,
``k_dense`` / ``k_sparse``, the strategy, the index it was fitted on and the training acc@1
at every w; :func:`~termnorm.search.stages.hybrid.card.load_hybrid` refuses it on another index.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from termnorm.search.build import recall_stage
from termnorm.search.domain import SearchSpace
from termnorm.search.stages.cards import recall_settings, write_json_card
from termnorm.search.stages.crossfit import (
    crossfit_map,
    gold_hits,
    load_training_data,
    training_space,
)
from termnorm.search.stages.fit_spec import TrainingDataSpec
from termnorm.search.stages.hybrid.card import CARD_KIND
from termnorm.search.stages.hybrid.matcher import (
    DEFAULT_K_DENSE,
    DEFAULT_K_SPARSE,
    HybridConfig,
    HybridMatcher,
    ScoredCandidates,
)

__all__ = [
    "WEIGHT_GRID",
    "HybridFitSpec",
    "fit_hybrid",
    "fit_weight",
    "scored_training_candidates",
]

logger = logging.getLogger(__name__)

WEIGHT_GRID = tuple(round(float(w), 2) for w in np.linspace(0.0, 1.0, 51))


@dataclass(frozen=True)
class HybridFitSpec(TrainingDataSpec):
    """What ``termnorm rank hybrid`` needs: the data and recall of
    :class:`~termnorm.search.stages.fit_spec.TrainingDataSpec` and the candidates of each
    side (module doc)."""

    k_dense: int = DEFAULT_K_DENSE
    k_sparse: int = DEFAULT_K_SPARSE


def fit_weight(
    scored: Sequence[ScoredCandidates], hits: Sequence[Sequence[bool]]
) -> tuple[float, dict[float, float]]:
    """The weight of :data:`WEIGHT_GRID` with the best acc@1 over the queries (ties: the
    larger w) and the acc@1 at every weight."""
    if not scored:
        raise ValueError("no training query to fit the hybrid weight on")
    acc = {}
    for w in WEIGHT_GRID:
        right = sum(
            bool(h) and bool(h[int(s.order(w)[0])]) for s, h in zip(scored, hits, strict=True)
        )
        acc[w] = right / len(scored)
    best = max(WEIGHT_GRID, key=lambda w: (acc[w], w))
    return best, acc


def scored_training_candidates(
    space: SearchSpace, spec: HybridFitSpec
) -> tuple[list[Any], list[ScoredCandidates], list[list[bool]]]:
    """The training queries, their merged candidates (cross-fitted) and which are gold."""
    data = load_training_data(spec)
    config = HybridConfig(0.5, spec.k_dense, spec.k_sparse)

    def run(fold_space: SearchSpace, texts: list[str]) -> list[ScoredCandidates]:
        return HybridMatcher(recall_stage(spec, fold_space), config).scored(texts)

    scored = crossfit_map(
        space, data.queries, run, data.fixed, data.crossfit, spec.folds, spec.seed
    )
    hits = gold_hits(data.queries, [s.candidates for s in scored], space.index)
    return data.queries, scored, hits


def fit_hybrid(spec: HybridFitSpec, out: str | Path) -> dict[str, Any]:
    """Fit the weight on the training candidates and write the card to ``out`` (JSON)."""
    space = training_space(spec)
    queries, scored, hits = scored_training_candidates(space, spec)
    weight, acc = fit_weight(scored, hits)
    dense_first = sum(bool(h) and h[0] for h in hits) / max(1, len(hits))
    reach = sum(any(h) for h in hits) / max(1, len(hits))
    card = {
        "kind": CARD_KIND,
        "weight": weight,
        "k_dense": spec.k_dense,
        "k_sparse": spec.k_sparse,
        **recall_settings(spec, space.index),
        "metrics": {
            "queries": len(queries),
            "train_acc_at_1": acc[weight],
            "train_acc_at_1_dense": dense_first,
            "train_candidates_with_gold": reach,
            "train_acc_at_1_by_weight": {f"{w:.2f}": a for w, a in acc.items()},
        },
    }
    write_json_card(out, card)
    logger.info(
        "hybrid weight %.2f: train acc@1 %.4f (dense %.4f)", weight, acc[weight], dense_first
    )
    return card
