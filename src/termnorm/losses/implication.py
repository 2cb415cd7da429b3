"""Cross-entropy of the implication-number head (MTCG, Liang et al. 2021, formula 8).

A mention with g gold codes has the label y = min(g, 3) ∈ {1, 2, 3} (3 = "three or more",
the paper's classes for a long-tailed count); with the head's logits z ∈ R³

    L = −(1/B) Σ_i log softmax(z_i)[y_i − 1]

The MTCG adds it to the triplet loss with weight 1. The paper's loss is the plain mean above
(``weights=None``). Composite mentions are rare (NCBI-disease train: 1,628 one-code mentions
against 70 and 7), and the plain mean then learns to answer "one code" for every mention; so
termnorm defaults to *balanced* class weights ``w_c = N / (C · n_c)`` (N items, C classes
present, n_c items of class c; sklearn's ``class_weight="balanced"``), a weighted mean:

    L = −Σ_i w_{y_i} log softmax(z_i)[y_i − 1] / Σ_i w_{y_i}
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

__all__ = ["ImplicationLoss", "balanced_class_weights", "implication_labels"]


def implication_labels(code_counts: torch.Tensor) -> torch.Tensor:
    """Class indices ``[B]`` (0, 1, 2 for 1, 2, ≥3 codes) of gold-code counts ``[B]`` (≥ 1)."""
    if bool((code_counts < 1).any()):
        raise ValueError("every mention needs at least one gold code for an implication label")
    return code_counts.clamp(max=3).long() - 1


def balanced_class_weights(code_counts: torch.Tensor) -> torch.Tensor:
    """``w_c = N / (C · n_c)`` ``[3]`` for the classes of the training items' gold-code counts
    ``[N]`` (module doc); a class without items gets weight 0 (it never occurs as a label)."""
    counts = torch.bincount(implication_labels(code_counts), minlength=3).double()
    present = int((counts > 0).sum())
    if present == 0:
        raise ValueError("no training items to weigh the implication classes by")
    weights = torch.where(counts > 0, counts.sum() / (present * counts.clamp(min=1)), 0.0)
    return weights.float()


class ImplicationLoss(nn.Module):
    """``forward(logits [B, 3], code_counts [B]) -> scalar`` cross-entropy (module doc).

    Args:
        weights: per-class weights ``[3]`` (classes 1, 2, ≥3 codes) for the weighted mean, e.g.
            :func:`balanced_class_weights`; ``None`` is the paper's plain mean.
    """

    def __init__(self, weights: torch.Tensor | None = None) -> None:
        super().__init__()
        if weights is not None and tuple(weights.shape) != (3,):
            raise ValueError(
                f"implication class weights must have shape (3,), got {tuple(weights.shape)}"
            )
        self.weights: torch.Tensor | None
        self.register_buffer("weights", weights, persistent=False)

    def forward(self, logits: torch.Tensor, code_counts: torch.Tensor) -> torch.Tensor:
        """(Weighted) mean cross-entropy of the logits against ``min(count, 3)``."""
        labels = implication_labels(code_counts.to(logits.device))
        weights = None if self.weights is None else self.weights.to(logits.device, logits.dtype)
        return F.cross_entropy(logits, labels, weight=weights)
