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

__getattr__ = lazy_getattr(
    __name__,
    {
        "DEFAULT_FUSION_WEIGHT": "fusion",
        "DEFAULT_K_C": "specs",
        "DEFAULT_THETA": "fusion",
        "RankMode": "fusion",
        "fuse": "fusion",
        "recall_similarities": "fusion",
        "select_codes": "fusion",
        "CombinerFitSpec": "combiner_fit",
        "fit_combiner_card": "combiner_fit",
        "HybridFitSpec": "hybrid_fit",
        "fit_hybrid": "hybrid_fit",
        "ImplicationLike": "implication",
        "resolve_implication": "implication",
        "index_implication": "implication",
        "RankedMatcher": "matcher",
        "Ranker": "ranker",
        "load_ranker": "ranker",
        "save_ranker": "ranker",
        "candidate_text": "texts",
        "KeywordCrossEncoder": "cross_encoder",
        "RankTrainSpec": "specs",
        "RankerTrainConfig": "specs",
        "TrainingDataSpec": "specs",
        "TrainingData": "train_data",
        "RankPair": "train_loop",
        "train_cross_encoder": "train_loop",
        "train_ranker": "training",
    },
)
