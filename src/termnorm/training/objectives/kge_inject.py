"""``--loss kge-inject``: KGE injection pre-training, L_MLM + L_EL over ``--corpus`` passages
with ``--kge`` entities injected (:mod:`termnorm.training.kge_injection`)."""

from __future__ import annotations

from termnorm.training.config.injection import InjectionConfig
from termnorm.training.config.shared import LossKind
from termnorm.training.objectives.base import Objective

__all__ = ["OBJECTIVE"]

OBJECTIVE = Objective(
    LossKind.KGE_INJECT,
    "termnorm.training.kge_injection:kge_injection_trainer",
    (InjectionConfig,),
    ("kge", "corpus", "corpus_format", "relation_lr"),
)
