"""``--loss ms-v3``: the MS loss with per-pair margins from a KGE (``--kge``,
:mod:`termnorm.training.kge_margin`), over the KG sampler's or prototype batches."""

from __future__ import annotations

from termnorm.training.config.prototype import PrototypeConfig
from termnorm.training.config.sampler import KGSamplerConfig
from termnorm.training.config.shared import LossKind
from termnorm.training.objectives.base import objective

__all__ = ["ENTRY"]

ENTRY = objective(
    LossKind.MS_V3,
    "termnorm.training.kge_margin:kge_margin_trainer",
    None,
    KGSamplerConfig,
    PrototypeConfig,
    reads=("kge", "batches", "corpus", "corpus_format"),
    help="the MS loss with per-pair margins from a KGE",
)
