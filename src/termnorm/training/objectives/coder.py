"""The CODER losses (:mod:`termnorm.training.coder`) over the KG sampler's batches: the MS loss
v1/v2 alone (``ms``, ``ms-v2``: prototype batches too, ``--batches prototype``) or with a
relation loss (``coder``, ``transe``, ``transe-margin``), ``+sty`` adding the semantic-type
loss (their heads train at ``--relation-lr``). Their settings: the relation and semantic-type
weights, the TransE margin, the MS loss v2 margins; and their entries."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from termnorm.training.config.base import Section, opt
from termnorm.training.config.prototype import PrototypeConfig
from termnorm.training.config.sampler import KGSamplerConfig
from termnorm.training.config.shared import LossKind
from termnorm.training.objectives.base import objective

__all__ = ["ENTRIES", "CoderLossConfig"]


@dataclass
class CoderLossConfig(Section):
    """``loss = L_MS + μ · L_rel + w_sty · L_sty`` (see :mod:`termnorm.training.coder`)."""

    name: ClassVar[str] = "coder"

    rel_weight: float | None = opt(None, "Weight μ of the relation loss (default per --loss).")
    sty_weight: float = opt(0.1, "Weight of the semantic-type loss (the '+sty' objectives).")
    transe_margin: float = opt(1.0, "Margin γ of the transe-margin loss.")
    ms_lam_pos: float = opt(1.0, "--loss ms-v2: positive margin λ_p (the paper's 1.0).")
    ms_lam_neg: float = opt(0.5, "--loss ms-v2: negative margin λ_n (the paper's 0.5).")

    def relation_weight(self, loss: str) -> float:
        """μ: the explicit --rel-weight, else 1.0 (coder, transe-margin) or 0.1 (transe)."""
        if self.rel_weight is not None:
            return self.rel_weight
        return 0.1 if LossKind(loss).relation == "transe" else 1.0


_MS = (LossKind.MS, LossKind.MS_V2)
_WITH_HEADS = (
    LossKind.CODER,
    LossKind.TRANSE,
    LossKind.TRANSE_MARGIN,
    LossKind.CODER_STY,
    LossKind.MS_STY,
    LossKind.TRANSE_MARGIN_STY,
)
_MS_READS = ("batches", "corpus", "corpus_format")

ENTRIES = [
    objective(
        kind,
        "termnorm.training.coder:coder_trainer",
        CoderLossConfig,
        KGSamplerConfig,
        CoderLossConfig,
        *prototype,
        reads=reads,
        help=help,
    )
    for kinds, prototype, reads, help in (
        (_MS, (PrototypeConfig,), _MS_READS, "the MS loss over synonym groups (or prototypes)"),
        (_WITH_HEADS, (), ("relation_lr",), "the MS loss with a relation (and type) loss"),
    )
    for kind in kinds
]
"""One objective per CODER loss."""
