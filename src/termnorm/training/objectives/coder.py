"""The CODER losses (:mod:`termnorm.training.coder`) over the KG sampler's batches: the MS loss
v1/v2 alone (``ms``, ``ms-v2``: prototype batches too, ``--batches prototype``) or with a
relation loss (``coder``, ``transe``, ``transe-margin``), ``+sty`` adding the semantic-type
loss (their heads train at ``--relation-lr``)."""

from __future__ import annotations

from termnorm.training.config.coder import CoderLossConfig
from termnorm.training.config.prototype import PrototypeConfig
from termnorm.training.config.sampler import KGSamplerConfig
from termnorm.training.config.shared import LossKind
from termnorm.training.objectives.base import Objective

__all__ = ["OBJECTIVES"]

_TRAINER = "termnorm.training.coder:coder_trainer"
_MS = (LossKind.MS, LossKind.MS_V2)
_PROTOTYPE_READS = ("batches", "corpus", "corpus_format")
_WITH_HEADS = (
    LossKind.CODER,
    LossKind.TRANSE,
    LossKind.TRANSE_MARGIN,
    LossKind.CODER_STY,
    LossKind.MS_STY,
    LossKind.TRANSE_MARGIN_STY,
)

OBJECTIVES = [
    *(
        Objective(
            kind, _TRAINER, (KGSamplerConfig, CoderLossConfig, PrototypeConfig), _PROTOTYPE_READS
        )
        for kind in _MS
    ),
    *(
        Objective(kind, _TRAINER, (KGSamplerConfig, CoderLossConfig), ("relation_lr",))
        for kind in _WITH_HEADS
    ),
]
"""One objective per CODER loss."""
