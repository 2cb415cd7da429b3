"""Recall, then rank: a trained cross-encoder ranker, the fusion block and multi-code output,
hybrid recall's weight and the learned combiner.

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
    from termnorm.search.rank.fusion import (
        DEFAULT_FUSION_WEIGHT,
        DEFAULT_K_C,
        DEFAULT_THETA,
        RankMode,
        fuse,
        recall_similarities,
        select_codes,
    )
    from termnorm.search.rank.hybrid_fit import HybridFitSpec, fit_hybrid
    from termnorm.search.rank.implication import ImplicationLike, resolve_implication
    from termnorm.search.rank.matcher import RankedMatcher
    from termnorm.search.rank.ranker import Ranker, load_ranker, save_ranker
    from termnorm.search.rank.texts import candidate_text
    from termnorm.search.rank.training import RankTrainSpec, train_ranker

__all__ = [
    "DEFAULT_FUSION_WEIGHT",
    "DEFAULT_K_C",
    "DEFAULT_THETA",
    "CombinerFitSpec",
    "HybridFitSpec",
    "ImplicationLike",
    "RankMode",
    "RankTrainSpec",
    "RankedMatcher",
    "Ranker",
    "candidate_text",
    "fit_combiner_card",
    "fit_hybrid",
    "fuse",
    "load_ranker",
    "recall_similarities",
    "resolve_implication",
    "save_ranker",
    "select_codes",
    "train_ranker",
]

__getattr__ = lazy_getattr(
    __name__,
    {
        "DEFAULT_FUSION_WEIGHT": "fusion",
        "DEFAULT_K_C": "fusion",
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
        "RankedMatcher": "matcher",
        "Ranker": "ranker",
        "load_ranker": "ranker",
        "save_ranker": "ranker",
        "candidate_text": "texts",
        "RankTrainSpec": "training",
        "train_ranker": "training",
    },
)
