"""Settings of the CODER losses (:class:`termnorm.training.coder.CoderObjective`): the
relation and semantic-type weights, the TransE margin, the MS loss v2 margins."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from termnorm.training.config.base import Section, opt
from termnorm.training.config.shared import LossKind

__all__ = ["CoderLossConfig"]


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
