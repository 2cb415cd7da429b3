"""The ranker's room: the cross-encoder and its folder, its training data and loop, fusion,
multi-code output, hybrid recall's weight and the learned combiner.

The Python entry points equal to the CLI: ``train_ranker(RankTrainSpec(...), out)`` is
``termnorm rank train``, ``fit_hybrid(HybridFitSpec(...), out)`` is ``termnorm rank hybrid``,
``fit_combiner_card(CombinerFitSpec(...), out)`` is ``termnorm rank combine``.
Names resolve lazily (no torch import until a ranker is used).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from termnorm._lazy import lazy_getattr

if TYPE_CHECKING:  # pragma: no cover
    from termnorm.search.rank.combiner_fit import CombinerFitSpec, fit_combiner_card
    from termnorm.search.rank.cross_encoder import KeywordCrossEncoder
    from termnorm.search.rank.fusion import (
        DEFAULT_FUSION_WEIGHT,
        DEFAULT_THETA,
        RankMode,
        fuse,
        recall_similarities,
        select_codes,
    )
    from termnorm.search.rank.hybrid_fit import HybridFitSpec, fit_hybrid
    from termnorm.search.rank.implication import (
        ImplicationLike,
        index_implication,
        resolve_implication,
    )
    from termnorm.search.rank.matcher import RankedMatcher
    from termnorm.search.rank.ranker import Ranker, load_ranker, save_ranker
    from termnorm.search.rank.specs import (
        DEFAULT_K_C,
        RankerTrainConfig,
        RankTrainSpec,
        TrainingDataSpec,
    )
    from termnorm.search.rank.texts import candidate_text
    from termnorm.search.rank.train_data import TrainingData
    from termnorm.search.rank.train_loop import RankPair, train_cross_encoder
    from termnorm.search.rank.training import train_ranker

__all__ = [
    "DEFAULT_FUSION_WEIGHT",
    "DEFAULT_K_C",
    "DEFAULT_THETA",
    "CombinerFitSpec",
    "HybridFitSpec",
    "ImplicationLike",
    "KeywordCrossEncoder",
    "RankMode",
    "RankPair",
    "RankTrainSpec",
    "RankedMatcher",
    "Ranker",
    "RankerTrainConfig",
    "TrainingData",
    "TrainingDataSpec",
    "candidate_text",
    "fit_combiner_card",
    "fit_hybrid",
    "fuse",
    "index_implication",
    "load_ranker",
    "recall_similarities",
    "resolve_implication",
    "save_ranker",
    "select_codes",
    "train_cross_encoder",
    "train_ranker",
]

_MODULES = {
    "combiner_fit": ("CombinerFitSpec", "fit_combiner_card"),
    "cross_encoder": ("KeywordCrossEncoder",),
    "fusion": (
        "DEFAULT_FUSION_WEIGHT",
        "DEFAULT_THETA",
        "RankMode",
        "fuse",
        "recall_similarities",
        "select_codes",
    ),
    "hybrid_fit": ("HybridFitSpec", "fit_hybrid"),
    "implication": ("ImplicationLike", "index_implication", "resolve_implication"),
    "matcher": ("RankedMatcher",),
    "ranker": ("Ranker", "load_ranker", "save_ranker"),
    "specs": ("DEFAULT_K_C", "RankTrainSpec", "RankerTrainConfig", "TrainingDataSpec"),
    "texts": ("candidate_text",),
    "train_data": ("TrainingData",),
    "train_loop": ("RankPair", "train_cross_encoder"),
    "training": ("train_ranker",),
}
__getattr__ = lazy_getattr(__name__, {n: m for m, names in _MODULES.items() for n in names})
