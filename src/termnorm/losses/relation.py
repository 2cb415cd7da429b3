"""Term–relation–term Multi-Similarity loss (CODER's L_rel).

For k triplets (h_i, r_i, t_i) in a batch, anchors are (h_i, r_i), candidates are the tails t_j:

    S_rel(i, j) = cos(M_{r_i}ᵀ e_{h_i}, e_{t_j})     one l×l matrix per relation label, M_r = I at init
    τ_rel(i, j) = 1 iff t_i and t_j are the same concept (j = i included)
    L_rel       = MS loss of (S_rel, τ_rel) with α = 2, β = 50, λ = 0.5, ε = 0.1
    L           = L_MS + μ · L_rel,  μ = 1

The similarity is delegated to a :class:`~termnorm.losses.relation_head.RelationHead`, so the
same loss also trains the TransE-like head (see :mod:`termnorm.losses.transe`). With identity
matrices S_rel equals the plain cosine between head and tail terms. Reference: Yuan et al.,
"CODER: Knowledge-infused cross-lingual medical term embedding", JBI 2022, §3.3.
"""

from __future__ import annotations

import torch

from termnorm.losses.multi_similarity import MultiSimilarityBase
from termnorm.losses.relation_head import RelationHead

__all__ = ["RelationLoss"]


class RelationLoss(MultiSimilarityBase):
    """MS loss between relation-transformed heads and tails; owns the :class:`RelationHead`.

    ``forward(heads [k, d], rel_idx [k], tails [k, d], tail_labels [k]) -> scalar``.
    Rows with ``rel_idx < 0`` (synonym-only slots) are not anchors, but their second terms
    stay among the candidate tails (the paper's candidates are all tails of the batch); a
    batch without any relation
    returns a zero that still depends on the head's parameters (so DDP and backward never see
    an unused parameter).

    Args:
        head: the relation parameters (``matrix`` for CODER).
        alpha, beta, epsilon: MS parameters (2, 50, 0.1).
        lam: MS margin λ (0.5); ``None`` sets it once from the first batch as the mean S_rel
            ("λ_rel from the initial distance scale", used by the TransE-like variant).
        mine: online hard pair mining.
    """

    lam_value: torch.Tensor
    lam_ready: torch.Tensor

    def __init__(
        self,
        head: RelationHead,
        alpha: float = 2.0,
        beta: float = 50.0,
        lam: float | None = 0.5,
        epsilon: float = 0.1,
        mine: bool = True,
    ) -> None:
        super().__init__(alpha, beta, epsilon, mine)
        self.head = head
        # buffers, so a checkpoint keeps a data-derived λ
        self.register_buffer("lam_value", torch.tensor(0.0 if lam is None else float(lam)))
        self.register_buffer("lam_ready", torch.tensor(0.0 if lam is None else 1.0))

    def similarity(
        self, heads: torch.Tensor, rel_idx: torch.Tensor, tails: torch.Tensor
    ) -> torch.Tensor:
        """S_rel [a, c] between anchors (heads [a, d], rel_idx [a]) and tails [c, d]."""
        return self.head.score(heads.float(), rel_idx, tails.float())

    def forward(
        self,
        heads: torch.Tensor,
        rel_idx: torch.Tensor,
        tails: torch.Tensor,
        tail_labels: torch.Tensor,
    ) -> torch.Tensor:
        """L_rel over the rows that carry a relation (``rel_idx >= 0``)."""
        keep = rel_idx.to(heads.device) >= 0  # [k]
        zero = self.head.weight.sum() * 0.0
        if not bool(keep.any()):
            return zero + heads.sum() * 0.0
        h = heads[keep]  # [k', d]
        r = rel_idx.to(heads.device)[keep]  # [k']
        lab = tail_labels.to(heads.device)  # [k]
        sim = self.similarity(h, r, tails)  # [k', k]: every tail of the batch is a candidate
        if float(self.lam_ready) < 0.5:
            with torch.no_grad():
                self.lam_value.fill_(float(sim.detach().mean()))
                self.lam_ready.fill_(1.0)
        pos = lab[keep].unsqueeze(1) == lab.unsqueeze(0)  # [k', k] τ_rel
        loss = self.with_margins(sim, pos, ~pos, self.lam_value, self.lam_value)
        return loss + zero

    def extra_repr(self) -> str:
        return (
            f"kind={self.head.kind.value}, alpha={self.alpha}, beta={self.beta}, "
            f"lam={float(self.lam_value):.4g}, epsilon={self.epsilon}"
        )
