"""KG → better encoder: one trainer composed of a batch source, an objective and an evaluator.

Names resolve lazily (the CLI reads :mod:`termnorm.training.config` at start-up without
loading the trainer). Parts and extension points: :mod:`termnorm.training.protocols`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from termnorm._lazy import lazy_getattr

if TYPE_CHECKING:  # pragma: no cover
    from termnorm.training.coder import CoderObjective, coder_trainer
    from termnorm.training.config import (
        LossKind,
        NegativeKind,
        Precision,
        TrainConfig,
        TrainData,
    )
    from termnorm.training.distributed import DistInfo, init_distributed
    from termnorm.training.hard_negatives import nearest_neighbours
    from termnorm.training.kge_margin import KGEMarginObjective, kge_margin_trainer
    from termnorm.training.mtcg import MtcgObjective, MtcgSource, mtcg_trainer
    from termnorm.training.protocols import BatchSource, Evaluator, Objective
    from termnorm.training.run import build_trainer, run_training
    from termnorm.training.sampler import Batch, KGSampler
    from termnorm.training.trainer import LOG_FILE, Trainer, TrainResult, load_base_encoder
    from termnorm.training.triplet import TripletObjective, TripletSampler, triplet_trainer

__all__ = [
    "LOG_FILE",
    "Batch",
    "BatchSource",
    "CoderObjective",
    "DistInfo",
    "Evaluator",
    "KGEMarginObjective",
    "KGSampler",
    "LossKind",
    "MtcgObjective",
    "MtcgSource",
    "NegativeKind",
    "Objective",
    "Precision",
    "TrainConfig",
    "TrainData",
    "TrainResult",
    "Trainer",
    "TripletObjective",
    "TripletSampler",
    "build_trainer",
    "coder_trainer",
    "init_distributed",
    "kge_margin_trainer",
    "load_base_encoder",
    "mtcg_trainer",
    "nearest_neighbours",
    "run_training",
    "triplet_trainer",
]

__getattr__ = lazy_getattr(
    __name__,
    {
        "CoderObjective": "coder",
        "coder_trainer": "coder",
        "LossKind": "config",
        "NegativeKind": "config",
        "Precision": "config",
        "TrainConfig": "config",
        "TrainData": "config",
        "DistInfo": "distributed",
        "init_distributed": "distributed",
        "nearest_neighbours": "hard_negatives",
        "KGEMarginObjective": "kge_margin",
        "kge_margin_trainer": "kge_margin",
        "MtcgObjective": "mtcg",
        "MtcgSource": "mtcg",
        "mtcg_trainer": "mtcg",
        "BatchSource": "protocols",
        "Evaluator": "protocols",
        "Objective": "protocols",
        "build_trainer": "run",
        "run_training": "run",
        "Batch": "sampler",
        "KGSampler": "sampler",
        "LOG_FILE": "trainer",
        "Trainer": "trainer",
        "TrainResult": "trainer",
        "load_base_encoder": "trainer",
        "TripletObjective": "triplet",
        "TripletSampler": "triplet",
        "triplet_trainer": "triplet",
    },
)
