"""MS loss v3: Multi-Similarity margins set per pair by a knowledge-graph embedding (KGE).

Formula 3 of Amore Bondarenko et al., with S^KGE_ik the cosine similarity of the KGE entity
vectors of the concepts of i and k, and the hard pair mining P_i, N_i of the MS loss unchanged::

    λ_p(i, k) = |S_ik − S^KGE_ik|          (positive pairs)
    λ_n(i, k) = 1 − |S_ik − S^KGE_ik|      (negative pairs)
    L = 1/m Σ_i [ 1/α · log(1 + Σ_{k∈P_i} exp(−α(S_ik − λ_p(i, k))))
                + 1/β · log(1 + Σ_{k∈N_i} exp( β(S_ik − λ_n(i, k)))) ]

Defaults α = 2, β = 50, ε = 0.1 (the paper keeps CODER's values). The margins are *margins*:
they are computed from a detached S (no gradient flows through λ), as the paper calls them
"the λ parameter (i.e. the similarity margin)" chosen dynamically. (Differentiating through
|S − S^KGE| would instead make the positive term constant wherever S_ik > S^KGE_ik.) When the
margins equal a constant λ the loss is :class:`~termnorm.losses.MultiSimilarityLoss`.
Pairs whose KGE similarity is unknown (a concept without an entity vector: ``known`` False)
get the MS loss's constant margin λ (0.5) on both sides instead.
Reference: Amore Bondarenko, Ferrod, Di Caro, "Combining Contrastive Learning and Knowledge
Graph Embeddings to develop medical word embeddings for the Italian language", 2022, §3.2.
"""

from __future__ import annotations

import torch

from termnorm.losses.multi_similarity import MultiSimilarityBase, label_pairs

__all__ = ["MultiSimilarityV3Loss", "kge_margins"]


def kge_margins(
    sim: torch.Tensor,
    kge_sim: torch.Tensor,
    known: torch.Tensor | None = None,
    lam: float = 0.5,
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(λ_p, λ_n)`` [A, C] of formula 3 from ``sim`` [A, C] and ``kge_sim`` [A, C] (no grad).

    ``known`` [A, C] (bool, default all True): where False, both margins are the constant
    ``lam`` (the MS loss's λ) and ``kge_sim`` is not read.
    """
    if sim.shape != kge_sim.shape or (known is not None and known.shape != sim.shape):
        raise ValueError(
            f"the KGE similarity matrix has shape {tuple(kge_sim.shape)} (known-mask "
            f"{None if known is None else tuple(known.shape)}), the batch's similarity matrix "
            f"{tuple(sim.shape)}: give one KGE similarity per pair"
        )
    with torch.no_grad():
        gap = (sim.detach().float() - kge_sim.to(sim.device).float()).abs()  # [A, C]
        lam_pos, lam_neg = gap, 1.0 - gap
        if known is not None:
            known = known.to(sim.device).bool()
            lam_pos = torch.where(known, lam_pos, torch.full_like(lam_pos, lam))
            lam_neg = torch.where(known, lam_neg, torch.full_like(lam_neg, lam))
    return lam_pos, lam_neg


class MultiSimilarityV3Loss(MultiSimilarityBase):
    """MS loss v3 over a batch of term embeddings labelled by concept, margins from a KGE.

    ``forward(embeddings [N, d], labels [N], kge_sim [N, N]) -> scalar``: S = cosine
    similarity matrix; pairs (i, j ≠ i) are positive iff ``labels[i] == labels[j]``;
    ``kge_sim[i, j]`` is the KGE similarity of the concepts of items i and j (e.g.
    ``termnorm.kge.load_kge(folder).similarity(ids, ids)`` for the batch's concept IDs; it is
    1 for two terms of one concept).

    Args:
        alpha: positive scale α (2).
        beta: negative scale β (50).
        epsilon: mining margin ε (0.1).
        mine: apply online hard pair mining (True, as in the MS loss).
        lam: the margin of pairs whose KGE similarity is unknown (the MS loss's λ, 0.5).
    """

    def __init__(
        self,
        alpha: float = 2.0,
        beta: float = 50.0,
        epsilon: float = 0.1,
        mine: bool = True,
        lam: float = 0.5,
    ) -> None:
        super().__init__(alpha, beta, epsilon, mine)
        self.lam = lam

    def forward(
        self,
        embeddings: torch.Tensor,
        labels: torch.Tensor,
        kge_sim: torch.Tensor,
        known: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Loss of embeddings [N, d] with integer labels [N] and KGE similarities [N, N]
        (``known`` [N, N]: False where a pair falls back to the margin ``lam``)."""
        sim, pos_mask, neg_mask = label_pairs(embeddings, labels)
        return self.from_similarity(sim, pos_mask, neg_mask, kge_sim, known)

    def from_similarity(
        self,
        sim: torch.Tensor,
        pos_mask: torch.Tensor,
        neg_mask: torch.Tensor,
        kge_sim: torch.Tensor,
        known: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """The same loss on a precomputed similarity matrix [A, C], masks and KGE sims [A, C]."""
        return self.with_margins(
            sim, pos_mask, neg_mask, *kge_margins(sim, kge_sim, known, self.lam)
        )
