"""Margin triplet loss over given (anchor, positive, negatives) vectors (MTCG's recall loss).

For an anchor m with positive p and negatives n_1..n_k (Liang et al. 2021, formula 7):

    L(m) = (1/k) Σ_j max(0, ‖m − p‖₂ + margin − ‖m − n_j‖₂)

and the loss is the mean of L over the anchors. Unlike
:class:`~termnorm.losses.BatchHardSoftMarginTripletLoss`, nothing is mined inside the batch: the
negatives are chosen beforehand (the negative strategies of :mod:`termnorm.training.negatives`).
Distances are Euclidean between the un-normalised pooled vectors, as in the paper.

Hyper-parameters: ``margin`` (paper: 1). Reference: Liang, Xue & Ruan, "A multi-perspective
combined recall and rank framework for Chinese procedure terminology normalization", 2021.
"""

from __future__ import annotations

import torch
from torch import nn

__all__ = ["MarginTripletLoss"]


class MarginTripletLoss(nn.Module):
    """``forward(anchors [B, d], positives [B, d], negatives [B, k, d]) -> scalar``."""

    def __init__(self, margin: float = 1.0) -> None:
        super().__init__()
        if margin <= 0:
            raise ValueError(f"the triplet margin must be > 0, got {margin}")
        self.margin = margin

    def forward(
        self, anchors: torch.Tensor, positives: torch.Tensor, negatives: torch.Tensor
    ) -> torch.Tensor:
        """Mean hinge over the B × k triples (module doc)."""
        d_pos = (anchors - positives).norm(dim=-1)  # [B]
        d_neg = (anchors.unsqueeze(1) - negatives).norm(dim=-1)  # [B, k]
        return torch.relu(d_pos.unsqueeze(1) + self.margin - d_neg).mean()
