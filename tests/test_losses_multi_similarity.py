"""Multi-Similarity loss: hand-computed values, mining, gradient directions, agreement with PML."""

from __future__ import annotations

import math

import pytest
import torch

from termnorm.losses import MultiSimilarityLoss, mine_hard_pairs, multi_similarity_from_similarity


def _unit(*rows: list[float]) -> torch.Tensor:
    return torch.nn.functional.normalize(torch.tensor(rows, dtype=torch.float32), dim=-1)


def test_zero_when_concepts_are_well_separated() -> None:
    # two concepts, each pair identical, the concepts orthogonal: nothing is mined
    e = _unit([1, 0], [1, 0], [0, 1], [0, 1])
    labels = torch.tensor([0, 0, 1, 1])
    assert MultiSimilarityLoss()(e, labels).item() == 0.0


def test_mining_selects_exactly_the_hard_pairs() -> None:
    sim = torch.tensor(
        [
            [1.00, 0.80, 0.30, 0.75, 0.20],  # anchor 0: pos {1, 2}, neg {3, 4}
        ]
    )
    pos = torch.tensor([[False, True, True, False, False]])
    neg = torch.tensor([[False, False, False, True, True]])
    hard_pos, hard_neg = mine_hard_pairs(sim, pos, neg, epsilon=0.1)
    # min positive = 0.30 -> negatives above 0.20: only 0.75 (0.20 is not > 0.20)
    assert hard_neg.tolist() == [[False, False, False, True, False]]
    # max negative = 0.75 -> positives below 0.85: 0.80 and 0.30
    assert hard_pos.tolist() == [[False, True, True, False, False]]


def test_empty_sets_when_an_anchor_has_no_positive_or_no_negative() -> None:
    sim = torch.tensor([[1.0, 0.9, 0.8], [0.9, 1.0, 0.7]])
    only_neg = torch.tensor([[False, True, True], [False, False, False]])
    no_pos = torch.zeros_like(only_neg)
    hard_pos, hard_neg = mine_hard_pairs(sim, no_pos, only_neg, 0.1)
    assert not hard_pos.any() and not hard_neg.any()


def test_value_matches_the_formula_by_hand() -> None:
    sim = torch.tensor([[0.6, 0.7], [0.2, 0.9]])
    pos = torch.tensor([[True, False], [True, False]])
    neg = ~pos
    a, b, lam = 2.0, 50.0, 0.5
    # no mining: every pair counts
    row0 = math.log1p(math.exp(-a * (0.6 - lam))) / a + math.log1p(math.exp(b * (0.7 - lam))) / b
    row1 = math.log1p(math.exp(-a * (0.2 - lam))) / a + math.log1p(math.exp(b * (0.9 - lam))) / b
    got = multi_similarity_from_similarity(sim, pos, neg, a, b, lam, 0.1, mine=False)
    assert got.item() == pytest.approx((row0 + row1) / 2, rel=1e-6)


def test_gradients_pull_positives_and_push_negatives() -> None:
    sim = torch.tensor([[0.4, 0.45, 0.1]], requires_grad=True)
    pos = torch.tensor([[True, False, False]])
    loss = multi_similarity_from_similarity(sim, pos, ~pos)
    loss.backward()
    assert sim.grad is not None
    assert sim.grad[0, 0] < 0  # raising a positive similarity lowers the loss
    assert sim.grad[0, 1] > 0  # raising a hard negative similarity raises it
    assert sim.grad[0, 2] == 0  # an easy negative (0.1 < 0.4 - 0.1) is not mined


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_agrees_with_pytorch_metric_learning(seed: int) -> None:
    # a dev dependency (pyproject's [dev]): a missing reference fails here instead of skipping
    from pytorch_metric_learning import losses as pml_losses
    from pytorch_metric_learning import miners as pml_miners

    torch.manual_seed(seed)
    e1 = torch.randn(32, 16, requires_grad=True)
    e2 = e1.detach().clone().requires_grad_(True)
    labels = torch.arange(8).repeat_interleave(4)
    miner = pml_miners.MultiSimilarityMiner(epsilon=0.1)
    reference = pml_losses.MultiSimilarityLoss(alpha=2, beta=50, base=0.5)
    ref = reference(e1, labels, miner(e1, labels))
    ours = MultiSimilarityLoss()(e2, labels)
    ref.backward()
    ours.backward()
    assert ours.item() == pytest.approx(ref.item(), rel=1e-5, abs=1e-7)
    assert e1.grad is not None and e2.grad is not None
    torch.testing.assert_close(e2.grad, e1.grad, rtol=1e-4, atol=1e-7)
