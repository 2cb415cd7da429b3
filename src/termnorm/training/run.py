"""One training job from its config: the composition root of ``termnorm train``.

:func:`run_training` joins the torchrun process group when there is one, reads the training
mentions (:mod:`termnorm.training.data`), builds the trainer of the objective ``config.loss`` names
(:func:`build_trainer`; :data:`termnorm.training.objectives.OBJECTIVES`), runs it and leaves the group. An evaluator (the dev set) is injected
by the caller — :func:`termnorm.train` builds one from ``config.dev`` — since training sits
below indexing and search.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from termnorm.kg import KnowledgeGraph
from termnorm.training.composition import Composition
from termnorm.training.config import BatchKind, TrainConfig
from termnorm.training.data import MentionPair, training_mentions
from termnorm.training.distributed import DistInfo, cleanup, init_distributed
from termnorm.training.objectives import OBJECTIVES
from termnorm.training.protocols import Evaluator
from termnorm.training.prototype import prototype_trainer
from termnorm.training.trainer import Trainer, TrainResult

__all__ = ["BATCH_COMPOSITIONS", "build_trainer", "run_training"]

BATCH_COMPOSITIONS: dict[BatchKind, Composition] = {BatchKind.PROTOTYPE: prototype_trainer}
"""Batch sources that replace a loss's own (``--batches``); the MS losses take any of them."""


def build_trainer(
    config: TrainConfig,
    kg: KnowledgeGraph | None = None,
    mentions: Sequence[MentionPair] = (),
    evaluator: Evaluator | None = None,
    dist_info: DistInfo | None = None,
) -> Trainer:
    """The :class:`Trainer` of ``config.loss`` (its objective's composition function, or that of
    ``config.batches`` where :data:`BATCH_COMPOSITIONS` has one), ready to train.

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
    compose = BATCH_COMPOSITIONS.get(config.batches) or OBJECTIVES.resolve(config.loss).load()
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
