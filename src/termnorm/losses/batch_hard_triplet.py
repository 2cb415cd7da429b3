"""Batch-hard soft-margin triplet loss (Hermans et al., 2017; Xu & Bethard, 2021, eq. 3-6).

For every anchor i of a batch, the hardest positive p (the least similar text of the same
concept) and the hardest negative n (the most similar text of another concept) are mined
online, and

    L(i) = ln(1 + exp(S_in − S_ip))          (the paper's notation, S a similarity)
         = ln(1 + exp(d_ip − d_in))          (with S = −d, d the Euclidean distance)

so the loss falls as the positive gets nearer than the negative; the hinge of the classic
triplet loss is replaced by the soft-plus, hence no margin. The loss is the mean of L(i) over
the anchors that have at least one positive and one negative in the batch; the others are
excluded (not counted as zero). Training uses the Euclidean distance between the un-normalised
pooled vectors, as in the paper; search uses the cosine (``distance="cosine"`` trains with
d = 1 − cos, the paper's suggested future variant).

Hyper-parameters: none besides the distance (paper: Euclidean). Reference: Xu & Bethard,
"Triplet-Trained Vector Space and Sieve-Based Search Improve Biomedical Concept Normalization",
BioNLP 2021; Hermans, Beyer & Leibe, "In Defense of the Triplet Loss for Person
Re-Identification", 2017.
"""

from __future__ import annotations

from enum import Enum
from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import nn

__all__ = ["BatchHardSoftMarginTripletLoss", "HardestPairs", "TripletDistance", "hardest_pairs"]


class TripletDistance(str, Enum):
    """Distance d used during training (S = −d in the paper's notation)."""

    EUCLIDEAN = "euclidean"
    COSINE = "cosine"


class HardestPairs(NamedTuple):
    """Mined pairs per anchor: indices [N] (−1 when absent), distances [N], validity mask [N]."""

    positive: torch.Tensor
    negative: torch.Tensor
    d_ap: torch.Tensor
    d_an: torch.Tensor
    valid: torch.Tensor


def pairwise_distance(embeddings: torch.Tensor, distance: TripletDistance) -> torch.Tensor:
    """Distances [N, N] between the rows of ``embeddings`` [N, d]."""
    if distance is TripletDistance.COSINE:
        unit = F.normalize(embeddings, dim=-1)
        return 1.0 - unit @ unit.T
    # ‖a − b‖² = ‖a‖² + ‖b‖² − 2 a·b, clamped, with a safe sqrt (zero distances get no NaN grad)
    sq = embeddings.pow(2).sum(dim=1)  # [N]
    d2 = (sq.unsqueeze(1) + sq.unsqueeze(0) - 2.0 * embeddings @ embeddings.T).clamp(min=0.0)
    zero = d2 == 0
    dist = torch.sqrt(d2 + zero.to(d2.dtype) * 1e-16)
    return dist.masked_fill(zero, 0.0)


def hardest_pairs(
    embeddings: torch.Tensor,
    labels: torch.Tensor,
    distance: TripletDistance | str = TripletDistance.EUCLIDEAN,
) -> HardestPairs:
    """Mine, for each row, the farthest same-label row and the nearest other-label row."""
    dist = pairwise_distance(embeddings, TripletDistance(distance))  # [N, N]
    labels = labels.view(-1)
    n = labels.numel()
    same = labels.unsqueeze(0) == labels.unsqueeze(1)  # [N, N]
    eye = torch.eye(n, dtype=torch.bool, device=labels.device)
    pos_mask = same & ~eye
    neg_mask = ~same
    has_pos = pos_mask.any(dim=1)
    has_neg = neg_mask.any(dim=1)
    d_pos = dist.masked_fill(~pos_mask, float("-inf"))
    d_neg = dist.masked_fill(~neg_mask, float("inf"))
    d_ap, positive = d_pos.max(dim=1)  # hardest positive: largest distance (smallest S)
    d_an, negative = d_neg.min(dim=1)  # hardest negative: smallest distance (largest S)
    valid = has_pos & has_neg
    positive = torch.where(has_pos, positive, torch.full_like(positive, -1))
    negative = torch.where(has_neg, negative, torch.full_like(negative, -1))
    return HardestPairs(positive, negative, d_ap, d_an, valid)


class BatchHardSoftMarginTripletLoss(nn.Module):
    """mean_i ln(1 + exp(d(i, p_i) − d(i, n_i))) over anchors with a positive and a negative.

    Args:
        distance: ``euclidean`` (paper default) or ``cosine`` (d = 1 − cos).
    """

    def __init__(self, distance: TripletDistance | str = TripletDistance.EUCLIDEAN) -> None:
        super().__init__()
        self.distance = TripletDistance(distance)

    def forward(self, embeddings: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        """Scalar loss for ``embeddings`` [N, d] with concept ``labels`` [N] (any int ids).

        A batch where no anchor has both a positive and a negative gives 0 (with a graph,
        so ``backward`` still works).
        """
        if embeddings.dim() != 2 or labels.numel() != embeddings.shape[0]:
            raise ValueError(
                f"expected embeddings [N, d] and labels [N], got {tuple(embeddings.shape)} "
                f"and {tuple(labels.shape)}"
            )
        pairs = hardest_pairs(embeddings, labels.to(embeddings.device), self.distance)
        if not bool(pairs.valid.any()):
            return embeddings.sum() * 0.0
        margin = pairs.d_ap[pairs.valid] - pairs.d_an[pairs.valid]  # [A] = S_in − S_ip
        return F.softplus(margin).mean()
