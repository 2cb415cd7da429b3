"""Semantic-type classification auxiliary loss (CODER v1's STY task).

    ŷ_i   = softmax(W e_i + b)
    L_sty = −1/N' Σ_i Σ_T y_iT log ŷ_iT          (weight 0.1 in the total loss)

A concept with several semantic types gets a uniform target over them; rows whose target is
all zero (concepts without a type) are left out of the mean. Reference: Yuan et al., "CODER:
Knowledge infused cross-lingual medical term embedding for term normalization", arXiv
2011.02947v1, ablation "MS+REL+STY".
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

__all__ = ["SemanticTypeLoss"]


class SemanticTypeLoss(nn.Module):
    """Linear classifier of semantic types on term embeddings, trained with cross-entropy.

    ``forward(embeddings [N, d], targets [N, T]) -> scalar``; ``targets`` rows are type
    distributions (one-hot, uniform over several types, or all zero to skip the row).

    Args:
        dim: embedding size d.
        n_types: number of semantic types T.
    """

    def __init__(self, dim: int, n_types: int) -> None:
        super().__init__()
        self.classifier = nn.Linear(dim, max(1, n_types))

    def forward(self, embeddings: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """Mean cross-entropy over rows that have a type."""
        logits = self.classifier(embeddings.float())  # [N, T]
        targets = targets.to(logits.device, logits.dtype)
        has_type = targets.sum(dim=1) > 0  # [N]
        zero = logits.sum() * 0.0
        if not bool(has_type.any()):
            return zero
        logp = F.log_softmax(logits[has_type], dim=-1)  # [N', T]
        return -(targets[has_type] * logp).sum(dim=1).mean() + zero
