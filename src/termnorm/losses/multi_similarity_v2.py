"""MS loss v2: the Multi-Similarity loss with separate positive and negative margins.

Formula 2 of Amore Bondarenko et al. (with the hard pair mining P_i, N_i of the MS loss)::

    L = 1/m Σ_i [ 1/α · log(1 + Σ_{k∈P_i} exp(−α(S_ik − λ_p)))
                + 1/β · log(1 + Σ_{k∈N_i} exp( β(S_ik − λ_n))) ]

Defaults α = 2, β = 50, ε = 0.1 (CODER) and λ_p = 1, λ_n = 0.5 (the paper's choice, after
Liu et al.). With λ_p = λ_n = λ it is :class:`~termnorm.losses.MultiSimilarityLoss`.
References: Amore Bondarenko, Ferrod, Di Caro, "Combining Contrastive Learning and Knowledge
Graph Embeddings to develop medical word embeddings for the Italian language", 2022, §3.2;
Liu et al., "The general pair-based weighting loss for deep metric learning", 2019.
"""

from __future__ import annotations

from termnorm.losses.multi_similarity import MultiSimilarityLoss

__all__ = ["MultiSimilarityV2Loss"]


class MultiSimilarityV2Loss(MultiSimilarityLoss):
    """MS loss v2 over a batch of term embeddings labelled by concept: the
    :class:`MultiSimilarityLoss` with the margins λ_p, λ_n.

    Args:
        alpha: positive scale α (2).
        beta: negative scale β (50).
        lam_pos: positive margin λ_p (1.0).
        lam_neg: negative margin λ_n (0.5).
        epsilon: mining margin ε (0.1).
        mine: apply online hard pair mining (True, as in the MS loss).
    """

    def __init__(
        self,
        alpha: float = 2.0,
        beta: float = 50.0,
        lam_pos: float = 1.0,
        lam_neg: float = 0.5,
        epsilon: float = 0.1,
        mine: bool = True,
    ) -> None:
        super().__init__(alpha, beta, lam_neg, epsilon, mine)
        self.lam_pos, self.lam_neg = lam_pos, lam_neg

    def margins(self) -> tuple[float, float]:
        """``(λ_p, λ_n)``."""
        return self.lam_pos, self.lam_neg
