"""Multi-Similarity loss with online hard pair mining (CODER's term–term loss).

For anchors i, candidates j, similarities S_ij and labels τ_ij (1 = positive pair):

    N_i = {j | τ_ij = 0, S_ij > min_{τ_ik = 1} S_ik − ε}      (hard negatives)
    P_i = {j | τ_ij = 1, S_ij < max_{τ_ik = 0} S_ik + ε}      (hard positives)
    L   = 1/A Σ_i [ 1/α · log(1 + Σ_{j∈P_i} exp(−α(S_ij − λ)))
                  + 1/β · log(1 + Σ_{j∈N_i} exp( β(S_ij − λ))) ]

Defaults α = 2, β = 50, λ = 0.5, ε = 0.1 (CODER, KDD 2022 §4.2). Reference: Wang et al.,
"Multi-Similarity Loss with General Pair Weighting for Deep Metric Learning", CVPR 2019; Yuan
et al., "CODER: Knowledge-infused cross-lingual medical term embedding", JBI 2022, §3.3.

:func:`multi_similarity_from_similarity` is the general form (any similarity matrix and any
positive/negative masks), reused by the term–relation–term losses. The mining follows
pytorch-metric-learning's ``MultiSimilarityMiner`` + ``MultiSimilarityLoss`` (which CODER's
reference code uses); ``tests/test_losses_multi_similarity.py`` checks that they agree.
"""

from __future__ import annotations

import inspect

import torch
import torch.nn.functional as F
from torch import nn

__all__ = [
    "MultiSimilarityBase",
    "MultiSimilarityLoss",
    "label_pairs",
    "mine_hard_pairs",
    "multi_similarity_from_similarity",
    "multi_similarity_with_margins",
]


def mine_hard_pairs(
    sim: torch.Tensor, pos_mask: torch.Tensor, neg_mask: torch.Tensor, epsilon: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """Hard positives P and hard negatives N as boolean masks ``[A, C]`` (no gradient).

    An anchor without any positive has no hard negative (min over ∅ = +∞) and an anchor
    without any negative has no hard positive (max over ∅ = −∞).
    """
    with torch.no_grad():
        s = sim.detach().float()  # [A, C]
        inf = torch.tensor(float("inf"), device=s.device)
        min_pos = torch.where(pos_mask, s, inf).amin(dim=1, keepdim=True)  # [A, 1]
        max_neg = torch.where(neg_mask, s, -inf).amax(dim=1, keepdim=True)  # [A, 1]
        hard_neg = neg_mask & (s > min_pos - epsilon)  # [A, C]
        hard_pos = pos_mask & (s < max_neg + epsilon)  # [A, C]
    return hard_pos, hard_neg


def _log1p_sum_exp(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """log(1 + Σ_{j: mask_ij} exp(x_ij)) per row, stable: ``[A, C] -> [A]``."""
    masked = torch.where(mask, x, torch.full_like(x, float("-inf")))  # [A, C]
    zero = torch.zeros(x.shape[0], 1, dtype=x.dtype, device=x.device)  # the "1 +" term
    return torch.logsumexp(torch.cat([zero, masked], dim=1), dim=1)  # [A]


def multi_similarity_from_similarity(
    sim: torch.Tensor,
    pos_mask: torch.Tensor,
    neg_mask: torch.Tensor,
    alpha: float = 2.0,
    beta: float = 50.0,
    lam: float | torch.Tensor = 0.5,
    epsilon: float = 0.1,
    mine: bool = True,
) -> torch.Tensor:
    """MS loss averaged over all A anchors from ``sim`` [A, C] and masks [A, C] → scalar.

    ``mine=False`` uses all positive and negative pairs (the MS loss without mining).
    """
    return multi_similarity_with_margins(
        sim, pos_mask, neg_mask, lam, lam, alpha, beta, epsilon, mine
    )


def multi_similarity_with_margins(
    sim: torch.Tensor,
    pos_mask: torch.Tensor,
    neg_mask: torch.Tensor,
    lam_pos: float | torch.Tensor,
    lam_neg: float | torch.Tensor,
    alpha: float = 2.0,
    beta: float = 50.0,
    epsilon: float = 0.1,
    mine: bool = True,
) -> torch.Tensor:
    """MS loss with a positive margin λ_p and a negative margin λ_n (scalars or ``[A, C]``).

    ``1/A Σ_i [1/α · log(1 + Σ_{P_i} exp(−α(S_ij − λ_p))) + 1/β · log(1 + Σ_{N_i} exp(β(S_ij −
    λ_n)))]``; with λ_p = λ_n = λ it is :func:`multi_similarity_from_similarity`. Mining
    (``mine``) depends on ``sim`` and ε only, never on the margins.
    """
    sim = sim.float()
    if sim.numel() == 0:
        return sim.sum()  # 0 with a graph (keeps DDP and backward happy)
    pos_mask = pos_mask.bool()
    neg_mask = neg_mask.bool()
    if mine:
        pos_mask, neg_mask = mine_hard_pairs(sim, pos_mask, neg_mask, epsilon)
    pos_term = _log1p_sum_exp(-alpha * (sim - lam_pos), pos_mask) / alpha  # [A]
    neg_term = _log1p_sum_exp(beta * (sim - lam_neg), neg_mask) / beta  # [A]
    return (pos_term + neg_term).mean()


def label_pairs(
    embeddings: torch.Tensor, labels: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Cosine matrix ``S`` [N, N] of ``embeddings`` [N, d] and the pair masks [N, N]:
    positive iff ``labels[i] == labels[j]`` and i ≠ j, negative iff the labels differ."""
    e = F.normalize(embeddings.float(), dim=-1)  # [N, d]
    sim = e @ e.T  # [N, N]
    labels = labels.to(e.device)
    same = labels.unsqueeze(0) == labels.unsqueeze(1)  # [N, N]
    eye = torch.eye(len(labels), dtype=torch.bool, device=e.device)
    return sim, same & ~eye, ~same


class MultiSimilarityBase(nn.Module):
    """The MS losses' shared parts: scales α, β, mining ε and ``mine`` (see
    :func:`multi_similarity_with_margins`); subclasses choose the margins λ_p, λ_n."""

    def __init__(self, alpha: float, beta: float, epsilon: float, mine: bool) -> None:
        super().__init__()
        self.alpha, self.beta, self.epsilon, self.mine = alpha, beta, epsilon, mine

    def with_margins(
        self,
        sim: torch.Tensor,
        pos_mask: torch.Tensor,
        neg_mask: torch.Tensor,
        lam_pos: float | torch.Tensor,
        lam_neg: float | torch.Tensor,
    ) -> torch.Tensor:
        """The MS loss of ``sim`` [A, C] and masks [A, C] with these margins, this loss's scales."""
        return multi_similarity_with_margins(
            sim,
            pos_mask,
            neg_mask,
            lam_pos,
            lam_neg,
            self.alpha,
            self.beta,
            self.epsilon,
            self.mine,
        )

    def extra_repr(self) -> str:
        """The constructor's arguments, in its order (``alpha=2.0, beta=50.0, ...``)."""
        names = list(inspect.signature(type(self).__init__).parameters)[1:]
        return ", ".join(f"{name}={getattr(self, name)}" for name in names)


class MultiSimilarityLoss(MultiSimilarityBase):
    """MS loss over a batch of term embeddings labelled by concept (CODER's L_MS).

    ``forward(embeddings [N, d], labels [N]) -> scalar``: S = cosine similarity matrix;
    pairs (i, j ≠ i) are positive iff ``labels[i] == labels[j]``.

    Args:
        alpha: positive scale α (2).
        beta: negative scale β (50).
        lam: similarity margin λ (0.5).
        epsilon: mining margin ε (0.1).
        mine: apply online hard pair mining (True in CODER).
    """

    def __init__(
        self,
        alpha: float = 2.0,
        beta: float = 50.0,
        lam: float = 0.5,
        epsilon: float = 0.1,
        mine: bool = True,
    ) -> None:
        super().__init__(alpha, beta, epsilon, mine)
        self.lam = lam

    def forward(self, embeddings: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        """Loss of embeddings [N, d] with integer labels [N]."""
        return self.from_similarity(*label_pairs(embeddings, labels))

    def from_similarity(
        self, sim: torch.Tensor, pos_mask: torch.Tensor, neg_mask: torch.Tensor
    ) -> torch.Tensor:
        """The same loss on a precomputed similarity matrix [A, C] and masks [A, C]."""
        return self.with_margins(sim, pos_mask, neg_mask, *self.margins())

    def margins(self) -> tuple[float, float]:
        """``(λ_p, λ_n)``: λ on both sides."""
        return self.lam, self.lam
