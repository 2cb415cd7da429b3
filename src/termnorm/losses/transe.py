"""TransE-style relation losses: the MS variant (CODER ablation) and the margin loss (CODER v1).

``TransEMSLoss`` (CODER, KDD 2022 §5.1 and appendix A.5)::

    S_rel,T(i, j) = −‖ê_{h_i} + r_i − ê_{t_j}‖₂
    L_rel = MS loss of S_rel,T with α_rel = 0.2, β_rel = 5, ε_rel = 0.1,
            λ_rel = the initial distance scale (mean S_rel,T of the first batch), μ = 0.1

The paper uses raw [CLS] vectors (initial distance ≈ 28, so λ_rel = 28 in its sign
convention); here ê are L2-normalised so that the saved relation head scores exactly the
vectors the saved encoder outputs, and λ_rel is measured instead of fixed: on shard 0 of
step 0, before training, alike on every DDP rank (the trainer's first-batch pass, see
``Objective.needs_first_batch`` in :mod:`termnorm.training.protocols`).

``TransEMarginLoss`` (CODER arXiv v1, §3.2 task 2, appendix B.1)::

    L_TransE = mean_i max(0, γ + ‖ê_{h_i} + r_i − ê_{t_i}‖ − ‖ê_{h_i} + r_i − ê_{t'_i}‖)

with one corrupted tail t'_i per triplet, margin γ = 1.0 and weight μ_TransE = 1.0. Corrupted
tails are terms of other concepts drawn from the same batch (no extra encoding).
Reference: Bordes et al., "Translating Embeddings for Modeling Multi-relational Data", 2013.
"""

from __future__ import annotations

import torch
from torch import nn

from termnorm.losses.relation import RelationLoss
from termnorm.losses.relation_head import RelationHead, RelationKind

__all__ = ["TransEMSLoss", "TransEMarginLoss"]


class TransEMSLoss(RelationLoss):
    """:class:`RelationLoss` over a ``transe`` head with the ablation's MS parameters.

    ``forward(heads [k, d], rel_idx [k], tails [k, d], tail_labels [k]) -> scalar``.
    """

    def __init__(
        self,
        head: RelationHead,
        alpha: float = 0.2,
        beta: float = 5.0,
        lam: float | None = None,
        epsilon: float = 0.1,
        mine: bool = True,
    ) -> None:
        if head.kind is not RelationKind.TRANSE:
            raise ValueError("TransEMSLoss needs a RelationHead of kind 'transe'")
        super().__init__(head, alpha=alpha, beta=beta, lam=lam, epsilon=epsilon, mine=mine)


class TransEMarginLoss(nn.Module):
    """Margin ranking loss of true tails against corrupted tails (CODER v1's L_TransE).

    ``forward(heads [k, d], rel_idx [k], tails [k, d], corrupted [k, d]) -> scalar``; rows with
    ``rel_idx < 0`` are ignored.

    Args:
        head: a ``transe`` :class:`RelationHead` (translation vectors r).
        margin: γ (1.0 in CODER v1).
    """

    def __init__(self, head: RelationHead, margin: float = 1.0) -> None:
        super().__init__()
        if head.kind is not RelationKind.TRANSE:
            raise ValueError("TransEMarginLoss needs a RelationHead of kind 'transe'")
        self.head = head
        self.margin = margin

    def forward(
        self,
        heads: torch.Tensor,
        rel_idx: torch.Tensor,
        tails: torch.Tensor,
        corrupted: torch.Tensor,
    ) -> torch.Tensor:
        """Mean hinge over the relation rows."""
        keep = rel_idx.to(heads.device) >= 0  # [k]
        zero = self.head.weight.sum() * 0.0
        if not bool(keep.any()):
            return zero + heads.sum() * 0.0
        r = rel_idx.to(heads.device)[keep]
        proj = self.head.project(heads[keep].float(), r)  # [k', d] ê_h + r
        t_pos = nn.functional.normalize(tails[keep].float(), dim=-1)  # [k', d]
        t_neg = nn.functional.normalize(corrupted[keep].float(), dim=-1)  # [k', d]
        d_pos = (proj - t_pos).norm(dim=-1)  # [k']
        d_neg = (proj - t_neg).norm(dim=-1)  # [k']
        return torch.relu(self.margin + d_pos - d_neg).mean() + zero

    def extra_repr(self) -> str:
        return f"margin={self.margin}"
