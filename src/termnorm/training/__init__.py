"""KG → better encoder: one trainer composed of a batch source, an objective and an evaluator.

Names resolve lazily (the CLI reads :mod:`termnorm.training.config` at start-up without
loading the trainer). Parts and extension points: :mod:`termnorm.training.protocols`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from termnorm._lazy import lazy_getattr

if TYPE_CHECKING:  # pragma: no cover
    from termnorm.training.coder import CoderObjective, coder_trainer
    from termnorm.training.config import BatchKind, LossKind, Precision, TrainConfig, TrainData
    from termnorm.training.distributed import DistInfo, init_distributed
    from termnorm.training.hard_negatives import nearest_neighbours, nearest_texts
    from termnorm.training.kge_injection import (
        InjectionObjective,
        InjectionSource,
        KGEInjector,
        kge_injection_trainer,
    )
    from termnorm.training.kge_margin import KGEMarginObjective, kge_margin_trainer
    from termnorm.training.model import load_base_encoder
    from termnorm.training.mtcg import MtcgObjective, MtcgSource, mtcg_trainer
    from termnorm.training.objectives.mtcg import ImplicationWeighting, NegativeKind
    from termnorm.training.pipeline import pipelined_training
    from termnorm.training.protocols import BatchSource, Evaluator, Objective, TokenObjective
    from termnorm.training.prototype import PrototypeSource, prototype_trainer
    from termnorm.training.run import build_trainer, run_training
    from termnorm.training.sampler import Batch, KGSampler
    from termnorm.training.trainer import LOG_FILE, Trainer, TrainResult
    from termnorm.training.triplet import TripletObjective, TripletSampler, triplet_trainer

__all__ = [
    "LOG_FILE",
    "Batch",
    "BatchKind",
    "BatchSource",
    "CoderObjective",
    "DistInfo",
    "Evaluator",
    "ImplicationWeighting",
    "InjectionObjective",
    "InjectionSource",
    "KGEInjector",
    "KGEMarginObjective",
    "KGSampler",
    "LossKind",
    "MtcgObjective",
    "MtcgSource",
    "NegativeKind",
    "Objective",
    "Precision",
    "PrototypeSource",
    "TokenObjective",
    "TrainConfig",
    "TrainData",
    "TrainResult",
    "Trainer",
    "TripletObjective",
    "TripletSampler",
    "build_trainer",
    "coder_trainer",
    "init_distributed",
    "kge_injection_trainer",
    "kge_margin_trainer",
    "load_base_encoder",
    "mtcg_trainer",
    "nearest_neighbours",
    "nearest_texts",
    "pipelined_training",
    "prototype_trainer",
    "run_training",
    "triplet_trainer",
]

_NAMES = {  # module: the names it gives
    "coder": "CoderObjective coder_trainer",
    "config": "BatchKind LossKind Precision TrainConfig TrainData",
    "objectives.mtcg": "ImplicationWeighting NegativeKind",
    "distributed": "DistInfo init_distributed",
    "hard_negatives": "nearest_neighbours nearest_texts",
    "kge_injection": "InjectionObjective InjectionSource KGEInjector kge_injection_trainer",
    "kge_margin": "KGEMarginObjective kge_margin_trainer",
    "mtcg": "MtcgObjective MtcgSource mtcg_trainer",
    "pipeline": "pipelined_training",
    "protocols": "BatchSource Evaluator Objective TokenObjective",
    "prototype": "PrototypeSource prototype_trainer",
    "run": "build_trainer run_training",
    "sampler": "Batch KGSampler",
    "model": "load_base_encoder",
    "trainer": "LOG_FILE Trainer TrainResult",
    "triplet": "TripletObjective TripletSampler triplet_trainer",
}
__getattr__ = lazy_getattr(__name__, {n: m for m, names in _NAMES.items() for n in names.split()})
