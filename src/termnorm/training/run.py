"""One training job from its config: the composition root of ``termnorm train``.

:func:`run_training` joins the torchrun process group when there is one, reads the training
mentions (:mod:`termnorm.training.data`), builds the trainer that ``config.loss`` names
(:func:`build_trainer`), runs it and leaves the group. An evaluator (the dev set) is injected
by the caller — :func:`termnorm.train` builds one from ``config.dev`` — since training sits
below indexing and search.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from termnorm.kg import KnowledgeGraph
from termnorm.training.coder import coder_trainer
from termnorm.training.config import BatchKind, LossKind, TrainConfig
from termnorm.training.data import MentionPair, training_mentions
from termnorm.training.distributed import DistInfo, cleanup, init_distributed
from termnorm.training.kge_injection import kge_injection_trainer
from termnorm.training.kge_margin import kge_margin_trainer
from termnorm.training.mtcg import mtcg_trainer
from termnorm.training.protocols import Evaluator
from termnorm.training.prototype import prototype_trainer
from termnorm.training.trainer import Trainer, TrainResult
from termnorm.training.triplet import triplet_trainer

__all__ = ["BATCH_COMPOSITIONS", "COMPOSITIONS", "build_trainer", "run_training"]

Composition = Callable[
    [TrainConfig, KnowledgeGraph, Sequence[MentionPair], Evaluator | None, DistInfo | None],
    Trainer,
]

COMPOSITIONS: dict[LossKind, Composition] = {
    **{kind: coder_trainer for kind in LossKind},
    LossKind.MS_V3: kge_margin_trainer,
    LossKind.TRIPLET: triplet_trainer,
    LossKind.KGE_INJECT: kge_injection_trainer,
    LossKind.MTCG: mtcg_trainer,
}
"""The trainer of each ``--loss``: ``(config, kg, mentions, evaluator, dist_info) -> Trainer``."""

BATCH_COMPOSITIONS: dict[BatchKind, Composition] = {BatchKind.PROTOTYPE: prototype_trainer}
"""Batch sources that replace a loss's own (``--batches``); the MS losses take any of them."""


def build_trainer(
    config: TrainConfig,
    kg: KnowledgeGraph | None = None,
    mentions: Sequence[MentionPair] = (),
    evaluator: Evaluator | None = None,
    dist_info: DistInfo | None = None,
) -> Trainer:
    """The :class:`Trainer` of ``config.loss`` (see :data:`COMPOSITIONS`), ready to train.

    Args:
        config: the run (checked first, before anything is loaded).
        kg: the KG (default: ``KnowledgeGraph.load(config.kg)``).
        mentions: ``(text, gold_ids)`` training mentions of ``--train-data od``.
        evaluator: dev evaluation with a ``primary_metric`` (keep-best follows it).
        dist_info: the process's DDP place (default: from torchrun's environment).
    """
    config.validate()
    if kg is None:
        if config.kg is None:
            raise ValueError("the training config needs a KG folder (--kg) or a KG object")
        kg = KnowledgeGraph.load(config.kg)
    compose = BATCH_COMPOSITIONS.get(config.batches, COMPOSITIONS[config.loss])
    return compose(config, kg, mentions, evaluator, dist_info)


def run_training(
    config: TrainConfig,
    kg: KnowledgeGraph | None = None,
    mentions: Iterable[MentionPair] | None = None,
    evaluator: Evaluator | None = None,
    resume: bool = False,
) -> TrainResult:
    """Train ``config`` (continuing its newest checkpoint with ``resume``) in this process or,
    under torchrun, as one rank of the job.

    ``mentions``: training mentions as pairs, instead of ``config.mentions`` files. Returns
    when done or after SIGINT/SIGTERM (``interrupted``: a checkpoint was written).
    """
    config.validate()
    pairs = training_mentions(config, mentions)
    info = init_distributed(config.device)
    try:
        return build_trainer(config, kg, pairs, evaluator, info).train(resume=resume)
    finally:
        cleanup(info)
