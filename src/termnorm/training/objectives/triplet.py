"""``--loss triplet``: the batch-hard soft-margin triplet network over Train:O or Train:OD
texts (:mod:`termnorm.training.triplet`)."""

from __future__ import annotations

from termnorm.training.config.shared import LossKind
from termnorm.training.config.triplet import TripletConfig
from termnorm.training.objectives.base import Objective

__all__ = ["OBJECTIVE"]

OBJECTIVE = Objective(
    LossKind.TRIPLET, "termnorm.training.triplet:triplet_trainer", (TripletConfig,)
)
