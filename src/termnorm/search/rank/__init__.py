"""Recall, then rank: a trained cross-encoder ranker, the fusion block and multi-code output.

Names resolve lazily (no torch import until a ranker is used).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from termnorm._lazy import lazy_getattr

if TYPE_CHECKING:  # pragma: no cover
    from termnorm.search.rank.fusion import (
        DEFAULT_FUSION_WEIGHT,
        DEFAULT_K_C,
        DEFAULT_THETA,
        RankMode,
        fuse,
        recall_similarities,
        select_codes,
    )
    from termnorm.search.rank.implication import ImplicationLike, resolve_implication
    from termnorm.search.rank.matcher import RankedMatcher
    from termnorm.search.rank.ranker import Ranker, load_ranker, save_ranker
    from termnorm.search.rank.texts import candidate_text
    from termnorm.search.rank.training import RankTrainSpec, train_ranker

__all__ = [
    "DEFAULT_FUSION_WEIGHT",
    "DEFAULT_K_C",
    "DEFAULT_THETA",
    "ImplicationLike",
    "RankMode",
    "RankTrainSpec",
    "RankedMatcher",
    "Ranker",
    "candidate_text",
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
