"""``--loss ms-v3``: the MS loss with per-pair margins from a KGE (``--kge``,
:mod:`termnorm.training.kge_margin`), over the KG sampler's or prototype batches."""

from __future__ import annotations

from termnorm.training.config.prototype import PrototypeConfig
from termnorm.training.config.sampler import KGSamplerConfig
from termnorm.training.config.shared import LossKind
from termnorm.training.objectives.base import Objective

__all__ = ["OBJECTIVE"]

OBJECTIVE = Objective(
    LossKind.MS_V3,
    "termnorm.training.kge_margin:kge_margin_trainer",
    (KGSamplerConfig, PrototypeConfig),
    ("kge", "batches", "corpus", "corpus_format"),
)
