"""``--loss mtcg``: the multi-task candidate generator, mention triplets + the implication-number
head (:mod:`termnorm.training.mtcg`; the head trains at ``--relation-lr``)."""

from __future__ import annotations

from termnorm.training.config.mtcg import MtcgConfig
from termnorm.training.config.shared import LossKind
from termnorm.training.objectives.base import Objective

__all__ = ["OBJECTIVE"]

OBJECTIVE = Objective(
    LossKind.MTCG, "termnorm.training.mtcg:mtcg_trainer", (MtcgConfig,), ("relation_lr",)
)
