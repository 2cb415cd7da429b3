"""Batch-hard soft-margin triplet loss on hand-built embeddings with known answers."""

from __future__ import annotations

import math

import pytest
import torch

from termnorm.losses.batch_hard_triplet import (
    BatchHardSoftMarginTripletLoss,
    TripletDistance,
    hardest_pairs,
)


def softplus(x: float) -> float:
    return math.log1p(math.exp(x))


def test_hardest_positive_is_farthest_same_concept_and_negative_nearest_other() -> None:
    # concept 0 on the x axis at 0, 0.8, 2; concept 1 at (0, 10) and (1.5, 0.5)
    emb = torch.tensor([[0.0, 0.0], [0.8, 0.0], [2.0, 0.0], [0.0, 10.0], [1.5, 0.5]])
    labels = torch.tensor([0, 0, 0, 1, 1])
    pairs = hardest_pairs(emb, labels)
    assert pairs.positive.tolist() == [2, 2, 0, 4, 3]
    assert pairs.negative.tolist() == [4, 4, 4, 0, 2]
    assert pairs.d_ap[0].item() == pytest.approx(2.0)
    assert pairs.d_an[0].item() == pytest.approx(math.hypot(1.5, 0.5))
    assert pairs.valid.all()


def test_loss_value_matches_the_formula() -> None:
    emb = torch.tensor([[0.0, 0.0], [3.0, 0.0], [0.0, 1.0], [0.0, 5.0]])
    labels = torch.tensor([7, 7, 9, 9])  # any integer ids
    expected = [
        softplus(3.0 - 1.0),  # anchor 0: p = 1 (d 3), n = 2 (d 1)
        softplus(3.0 - math.sqrt(10.0)),  # anchor 1: p = 0 (d 3), n = 2 (d √10)
        softplus(4.0 - 1.0),  # anchor 2: p = 3 (d 4), n = 0 (d 1)
        softplus(4.0 - 5.0),  # anchor 3: p = 2 (d 4), n = 0 (d 5)
    ]
    loss = BatchHardSoftMarginTripletLoss()(emb, labels)
    assert loss.item() == pytest.approx(sum(expected) / 4, rel=1e-5)


def test_anchor_without_positive_is_excluded_not_counted_as_zero() -> None:
    emb = torch.tensor([[0.0, 0.0], [2.0, 0.0], [0.0, 1.0]])
    labels = torch.tensor([0, 0, 1])  # text 2 is alone in its concept
    pairs = hardest_pairs(emb, labels)
    assert pairs.valid.tolist() == [True, True, False]
    assert pairs.positive[2].item() == -1
    expected = (softplus(2.0 - 1.0) + softplus(2.0 - math.sqrt(5.0))) / 2
    assert BatchHardSoftMarginTripletLoss()(emb, labels).item() == pytest.approx(expected)


def test_sign_convention_loss_falls_as_the_positive_gets_nearer() -> None:
    loss = BatchHardSoftMarginTripletLoss()
    labels = torch.tensor([0, 0, 1])
    far = loss(torch.tensor([[0.0, 0.0], [3.0, 0.0], [0.0, 2.0]]), labels)
    near = loss(torch.tensor([[0.0, 0.0], [0.5, 0.0], [0.0, 2.0]]), labels)
    assert near.item() < far.item()


def test_cosine_distance_option() -> None:
    emb = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [-1.0, 0.0]])
    labels = torch.tensor([0, 0, 1, 1])
    loss = BatchHardSoftMarginTripletLoss(TripletDistance.COSINE)(emb, labels)
    # anchor 0: d_ap = 1 − cos(e0, e1) = 1; nearest negative e2: 1 − 1/√2
    a0 = softplus(1.0 - (1.0 - 1.0 / math.sqrt(2)))
    a1 = softplus(1.0 - (1.0 - 1.0 / math.sqrt(2)))
    a2 = softplus((1.0 + 1.0 / math.sqrt(2)) - (1.0 - 1.0 / math.sqrt(2)))
    a3 = softplus((1.0 + 1.0 / math.sqrt(2)) - 1.0)  # p = e2; nearest negative e1 (d 1)
    assert loss.item() == pytest.approx((a0 + a1 + a2 + a3) / 4, rel=1e-5)


def test_no_valid_anchor_gives_zero_with_a_graph() -> None:
    emb = torch.randn(3, 4, requires_grad=True)
    loss = BatchHardSoftMarginTripletLoss()(emb, torch.tensor([0, 1, 2]))
    assert loss.item() == 0.0
    loss.backward()
    assert emb.grad is not None and torch.all(emb.grad == 0)


def test_duplicate_texts_give_finite_gradients() -> None:
    emb = torch.tensor([[1.0, 2.0], [1.0, 2.0], [1.0, 2.0], [0.0, 0.0]], requires_grad=True)
    loss = BatchHardSoftMarginTripletLoss()(emb, torch.tensor([0, 0, 1, 1]))
    loss.backward()
    assert emb.grad is not None and torch.isfinite(emb.grad).all()


def test_shape_errors_are_reported() -> None:
    with pytest.raises(ValueError, match=r"expected embeddings \[N, d\] and labels \[N\]"):
        BatchHardSoftMarginTripletLoss()(torch.zeros(3, 2), torch.tensor([0, 1]))
