"""The *pipelined* model of the Italian KGE paper (§3.2): KGE injection pre-training, then
MS loss v3 fine-tuning of the pre-trained encoder.

:func:`pipelined_training` runs the two jobs one after the other in this process: the first
(``--loss kge-inject``) writes a plain encoder folder (the injection is training-only, see
:mod:`termnorm.training.kge_injection`), which becomes the second job's ``base_model``. From
the command line the same is two ``termnorm train`` runs, the second with ``--base-model``
set to the first one's ``--out``.
"""

from __future__ import annotations

from termnorm.kg import KnowledgeGraph
from termnorm.training.config import PROTOTYPE_LOSSES, LossKind, TrainConfig
from termnorm.training.protocols import Evaluator
from termnorm.training.run import run_training
from termnorm.training.trainer import TrainResult

__all__ = ["pipelined_training"]


def pipelined_training(
    inject: TrainConfig,
    finetune: TrainConfig,
    kg: KnowledgeGraph | None = None,
    evaluator: Evaluator | None = None,
) -> tuple[TrainResult, TrainResult]:
    """Run ``inject`` (``loss`` kge-inject), then ``finetune`` (an MS loss, usually ms-v3)
    starting from ``inject.out``; returns both results. ``evaluator`` (dev metrics, keep-best)
    serves the fine-tuning job only.

    Raises:
        ValueError: the wrong losses, or a ``finetune.base_model`` other than ``inject.out``
            (the fine-tuning must start from the pre-trained encoder).
    """
    if inject.loss is not LossKind.KGE_INJECT:
        raise ValueError(f"the first stage must be --loss kge-inject (got {inject.loss})")
    if finetune.loss not in PROTOTYPE_LOSSES:
        raise ValueError(
            f"the fine-tuning stage takes an MS loss ({', '.join(PROTOTYPE_LOSSES)}), "
            f"got {finetune.loss}"
        )
    if inject.out is None:
        raise ValueError("the injection stage needs an output folder (out)")
    if finetune.base_model is not None and finetune.base_model != inject.out:
        raise ValueError(
            f"the fine-tuning stage starts from the injection stage's output {inject.out}, "
            f"not {finetune.base_model}: leave its base_model unset"
        )
    inject.validate()
    finetune = finetune.replace(base_model=inject.out)
    finetune.validate()
    first = run_training(inject, kg)
    if first.interrupted:
        return first, first
    return first, run_training(finetune, kg, evaluator=evaluator)
