"""The public names of the learned stages (:mod:`termnorm.search.stages`: the ranker, hybrid
recall and the learned combiner, each in its own package), in one place.

The Python entry points equal to the CLI: ``train_ranker(RankTrainSpec(...), out)`` is
``termnorm rank train``, ``fit_hybrid(HybridFitSpec(...), out)`` is ``termnorm rank hybrid``,
``fit_combiner_card(CombinerFitSpec(...), out)`` is ``termnorm rank combine``.
Names resolve lazily (no torch import until a ranker is used).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from termnorm._lazy import lazy_getattr

if TYPE_CHECKING:  # pragma: no cover
    from termnorm.search.stages.combiner.fit import CombinerFitSpec, fit_combiner_card
    from termnorm.search.stages.crossfit import TrainingData
    from termnorm.search.stages.fit_spec import TrainingDataSpec
    from termnorm.search.stages.hybrid.fit import HybridFitSpec, fit_hybrid
    from termnorm.search.stages.ranker.cross_encoder import KeywordCrossEncoder
    from termnorm.search.stages.ranker.fusion import (
        DEFAULT_FUSION_WEIGHT,
        DEFAULT_THETA,
        RankMode,
        fuse,
        recall_similarities,
        select_codes,
    )
    from termnorm.search.stages.ranker.implication import (
        ImplicationLike,
        index_implication,
        resolve_implication,
    )
    from termnorm.search.stages.ranker.matcher import RankedMatcher
    from termnorm.search.stages.ranker.ranker import Ranker, load_ranker, save_ranker
    from termnorm.search.stages.ranker.texts import candidate_text
    from termnorm.search.stages.ranker.train_loop import RankPair, train_cross_encoder
    from termnorm.search.stages.ranker.train_spec import (
        DEFAULT_K_C,
        RankerTrainConfig,
        RankTrainSpec,
    )
    from termnorm.search.stages.ranker.training import train_ranker

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
    "combiner.fit": ("CombinerFitSpec", "fit_combiner_card"),
    "crossfit": ("TrainingData",),
    "fit_spec": ("TrainingDataSpec",),
    "hybrid.fit": ("HybridFitSpec", "fit_hybrid"),
    "ranker.cross_encoder": ("KeywordCrossEncoder",),
    "ranker.fusion": (
        "DEFAULT_FUSION_WEIGHT",
        "DEFAULT_THETA",
        "RankMode",
        "fuse",
        "recall_similarities",
        "select_codes",
    ),
    "ranker.implication": ("ImplicationLike", "index_implication", "resolve_implication"),
    "ranker.matcher": ("RankedMatcher",),
    "ranker.ranker": ("Ranker", "load_ranker", "save_ranker"),
    "ranker.train_spec": ("DEFAULT_K_C", "RankTrainSpec", "RankerTrainConfig"),
    "ranker.texts": ("candidate_text",),
    "ranker.train_loop": ("RankPair", "train_cross_encoder"),
    "ranker.training": ("train_ranker",),
}
__getattr__ = lazy_getattr(
    "termnorm.search.stages", {n: m for m, names in _MODULES.items() for n in names}
)
