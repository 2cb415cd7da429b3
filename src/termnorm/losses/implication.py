"""Cross-entropy of the implication-number head (MTCG, Liang et al. 2021, formula 8).

A mention with g gold codes has the label y = min(g, 3) ∈ {1, 2, 3} (3 = "three or more",
the paper's classes for a long-tailed count); with the head's logits z ∈ R³

    L = −(1/B) Σ_i log softmax(z_i)[y_i − 1]

No hyper-parameters (the MTCG adds it to the triplet loss with weight 1).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

__all__ = ["ImplicationLoss", "implication_labels"]


def implication_labels(code_counts: torch.Tensor) -> torch.Tensor:
    """Class indices ``[B]`` (0, 1, 2 for 1, 2, ≥3 codes) of gold-code counts ``[B]`` (≥ 1)."""
    if bool((code_counts < 1).any()):
        raise ValueError("every mention needs at least one gold code for an implication label")
    return code_counts.clamp(max=3).long() - 1


class ImplicationLoss(nn.Module):
    """``forward(logits [B, 3], code_counts [B]) -> scalar`` cross-entropy (module doc)."""

    def forward(self, logits: torch.Tensor, code_counts: torch.Tensor) -> torch.Tensor:
        """Mean cross-entropy of the logits against ``min(count, 3)``."""
        return F.cross_entropy(logits, implication_labels(code_counts.to(logits.device)))
