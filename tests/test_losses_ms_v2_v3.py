"""MS loss v2 (separate margins) and v3 (KGE margins): reduction to v1, margins, gradients."""

from __future__ import annotations

import math

import pytest
import torch

from termnorm.losses import (
    MultiSimilarityLoss,
    MultiSimilarityV2Loss,
    MultiSimilarityV3Loss,
    kge_margins,
    label_pairs,
)


def _batch(seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    embeddings = torch.randn(24, 12, generator=gen)
    labels = torch.arange(6).repeat_interleave(4)
    return embeddings, labels


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("lam", [0.3, 0.5])
@pytest.mark.parametrize("mine", [True, False])
def test_v2_with_equal_margins_is_v1(seed: int, lam: float, mine: bool) -> None:
    e, labels = _batch(seed)
    v1 = MultiSimilarityLoss(lam=lam, mine=mine)(e, labels)
    v2 = MultiSimilarityV2Loss(lam_pos=lam, lam_neg=lam, mine=mine)(e, labels)
    assert torch.equal(v1, v2)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("lam", [0.3, 0.5])
def test_v3_with_kge_similarity_giving_margin_lambda_is_v1(seed: int, lam: float) -> None:
    e1, labels = _batch(seed)
    e1.requires_grad_(True)
    e3 = e1.detach().clone().requires_grad_(True)
    sim, pos, _ = label_pairs(e3, labels)
    # |S − K| = λ on positives and 1 − |S − K| = λ on negatives: both margins equal λ
    kge_sim = torch.where(pos, sim - lam, sim - (1.0 - lam)).detach()
    v1 = MultiSimilarityLoss(lam=lam)(e1, labels)
    v3 = MultiSimilarityV3Loss()(e3, labels, kge_sim)
    torch.testing.assert_close(v3, v1)
    v1.backward()
    v3.backward()
    assert e1.grad is not None and e3.grad is not None
    torch.testing.assert_close(e3.grad, e1.grad)  # no gradient flows through the margins


def test_v2_defaults_are_the_papers_margins() -> None:
    loss = MultiSimilarityV2Loss()
    assert (loss.lam_pos, loss.lam_neg, loss.alpha, loss.beta, loss.epsilon) == (
        1.0,
        0.5,
        2.0,
        50.0,
        0.1,
    )


def test_v2_value_by_hand() -> None:
    sim = torch.tensor([[0.6, 0.7]])
    pos = torch.tensor([[True, False]])
    a, b, lp, ln = 2.0, 50.0, 1.0, 0.5
    want = math.log1p(math.exp(-a * (0.6 - lp))) / a + math.log1p(math.exp(b * (0.7 - ln))) / b
    got = MultiSimilarityV2Loss(mine=False).from_similarity(sim, pos, ~pos)
    assert got.item() == pytest.approx(want, rel=1e-6)


def test_v3_margins_from_a_hand_made_kge_similarity() -> None:
    sim = torch.tensor([[0.9, 0.2, 0.7], [0.4, 0.8, -0.5]])
    kge = torch.tensor([[1.0, 0.5, 0.1], [0.4, 0.0, 0.5]])
    lam_pos, lam_neg = kge_margins(sim, kge)
    gap = torch.tensor([[0.1, 0.3, 0.6], [0.0, 0.8, 1.0]])
    torch.testing.assert_close(lam_pos, gap)
    torch.testing.assert_close(lam_neg, 1.0 - gap)


def test_v3_value_by_hand() -> None:
    # anchor 0: positive 0.6 with KGE 1.0, negative 0.7 with KGE 0.1; no mining
    sim = torch.tensor([[0.6, 0.7]])
    kge = torch.tensor([[1.0, 0.1]])
    pos = torch.tensor([[True, False]])
    a, b = 2.0, 50.0
    lam_p = abs(0.6 - 1.0)
    lam_n = 1 - abs(0.7 - 0.1)
    want = (
        math.log1p(math.exp(-a * (0.6 - lam_p))) / a + math.log1p(math.exp(b * (0.7 - lam_n))) / b
    )
    got = MultiSimilarityV3Loss(mine=False).from_similarity(sim, pos, ~pos, kge)
    assert got.item() == pytest.approx(want, rel=1e-6)


def test_v3_penalises_a_negative_far_above_its_kge_similarity_more() -> None:
    sim = torch.tensor([[0.9, 0.6]])
    pos = torch.tensor([[True, False]])
    related = MultiSimilarityV3Loss(mine=False).from_similarity(
        sim, pos, ~pos, torch.tensor([[1.0, 0.6]])
    )
    unrelated = MultiSimilarityV3Loss(mine=False).from_similarity(
        sim, pos, ~pos, torch.tensor([[1.0, -0.2]])
    )
    assert unrelated > related


def test_v3_rejects_a_kge_matrix_of_the_wrong_shape() -> None:
    e, labels = _batch(0)
    with pytest.raises(ValueError, match="one KGE similarity per pair"):
        MultiSimilarityV3Loss()(e, labels, torch.zeros(3, 3))


@pytest.mark.parametrize("loss_name", ["v2", "v3"])
def test_gradients_are_finite(loss_name: str) -> None:
    e, labels = _batch(3)
    e.requires_grad_(True)
    if loss_name == "v2":
        loss = MultiSimilarityV2Loss()(e, labels)
    else:
        kge = torch.rand(24, 24, generator=torch.Generator().manual_seed(0)) * 2 - 1
        loss = MultiSimilarityV3Loss()(e, labels, kge)
    loss.backward()
    assert torch.isfinite(loss)
    assert e.grad is not None and torch.isfinite(e.grad).all() and e.grad.abs().sum() > 0
