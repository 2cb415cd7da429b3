"""List-wise ranking loss: softmax over one query's candidates, cross-entropy on the gold.

For a query with candidate logits z_1..z_k (a cross-encoder's scores of its k = k_c recalled
candidates) and the set G of gold candidates,

    L = −log Σ_{i ∈ G} softmax(z)_i = logsumexp_{all}(z) − logsumexp_{i ∈ G}(z)

(the probability mass on the gold candidates; with one gold, plain cross-entropy). Queries
without a gold candidate among theirs carry no ranking signal and are left out of the mean;
a batch with none returns 0 (with a graph, so ``backward`` works). Padding (queries with fewer
candidates) is marked by ``mask``. This is the list-wise objective rankers in entity linking
train with (e.g. BioSyn's marginal likelihood, Sung et al. 2020), in place of point-wise BCE.
"""

from __future__ import annotations

import torch
from torch import nn

__all__ = ["ListwiseLoss"]


class ListwiseLoss(nn.Module):
    """``forward(logits [Q, K], gold [Q, K] bool, mask [Q, K] bool | None) -> scalar`` (module doc)."""

    def forward(
        self, logits: torch.Tensor, gold: torch.Tensor, mask: torch.Tensor | None = None
    ) -> torch.Tensor:
        if logits.shape != gold.shape:
            raise ValueError(f"logits {tuple(logits.shape)} and gold {tuple(gold.shape)} differ")
        valid = torch.ones_like(gold, dtype=torch.bool) if mask is None else mask.bool()
        gold = gold.bool() & valid
        neg_inf = torch.finfo(logits.dtype).min
        everything = torch.logsumexp(logits.masked_fill(~valid, neg_inf), dim=1)  # [Q]
        on_gold = torch.logsumexp(logits.masked_fill(~gold, neg_inf), dim=1)  # [Q]
        has_gold = gold.any(dim=1)  # [Q]
        if not bool(has_gold.any()):
            return logits.sum() * 0.0
        return (everything - on_gold)[has_gold].mean()
