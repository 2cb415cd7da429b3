"""``--loss distill``: multilingual knowledge distillation onto a frozen teacher's vectors of
the English names (Reimers & Gurevych 2020), optionally with the MS loss v1 / v3 on the KG
sampler's batches of the same KG (``--distill-with``; :mod:`termnorm.training.distill`)."""

from __future__ import annotations

from termnorm.training.config.distill import DistillConfig
from termnorm.training.config.sampler import KGSamplerConfig
from termnorm.training.config.shared import LossKind
from termnorm.training.objectives.base import Objective

__all__ = ["OBJECTIVE"]

OBJECTIVE = Objective(
    LossKind.DISTILL,
    "termnorm.training.distill:distill_trainer",
    (DistillConfig, KGSamplerConfig),
    ("kge",),
)
