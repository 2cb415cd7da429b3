"""TransE-like relation losses: MS variant (λ from the first batch) and the margin loss."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from termnorm.losses import RelationHead, TransEMarginLoss, TransEMSLoss


def test_transe_head_scores_negative_translation_distance() -> None:
    torch.manual_seed(0)
    head = RelationHead(["r", "s"], 5, "transe")
    with torch.no_grad():
        head.weight.copy_(torch.randn(2, 5) * 0.1)
    h, t = torch.randn(3, 5), torch.randn(4, 5)
    rel = torch.tensor([0, 1, 1])
    proj = F.normalize(h, dim=-1) + head.weight[rel]
    expected = -torch.cdist(proj, F.normalize(t, dim=-1))
    torch.testing.assert_close(head.score(h, rel, t), expected, atol=1e-5, rtol=1e-5)


def test_transe_distance_is_exact_near_zero() -> None:
    # ‖p‖² + ‖t‖² − 2p·t would leave ~1e-7 of rounding, i.e. a distance of ~3e-4
    torch.manual_seed(2)
    head = RelationHead(["r"], 64, "transe")
    t = torch.randn(8, 64)
    dist = -head.score(t, torch.zeros(8, dtype=torch.long), t).diagonal()
    assert float(dist.detach().max()) < 1e-5


def test_transe_ms_lambda_is_set_once_from_the_first_batch() -> None:
    torch.manual_seed(1)
    loss_fn = TransEMSLoss(RelationHead(["r"], 6, "transe"))
    h, t = torch.randn(6, 6), torch.randn(6, 6)
    rel, labels = torch.zeros(6, dtype=torch.long), torch.tensor([0, 0, 1, 1, 2, 2])
    loss_fn(h, rel, t, labels)
    first = F.normalize(h, dim=-1)
    expected = -torch.cdist(first, F.normalize(t, dim=-1)).mean()
    assert float(loss_fn.lam_value) == pytest.approx(expected.item(), rel=1e-5)
    loss_fn(torch.randn(6, 6) * 3, rel, t, labels)
    assert float(loss_fn.lam_value) == pytest.approx(expected.item(), rel=1e-5)
    assert (loss_fn.alpha, loss_fn.beta, loss_fn.epsilon) == (0.2, 5.0, 0.1)


def test_margin_loss_value_and_gradient_direction() -> None:
    head = RelationHead(["r"], 2, "transe")
    loss_fn = TransEMarginLoss(head, margin=1.0)
    h = torch.tensor([[1.0, 0.0]])
    t = torch.tensor([[0.0, 1.0]])  # ‖h + 0 − t‖ = √2
    bad = torch.tensor([[1.0, 0.0]])  # the corrupted tail equals the head: distance 0
    rel = torch.tensor([0])
    loss = loss_fn(h, rel, t, bad)
    assert loss.item() == pytest.approx(1.0 + 2**0.5, rel=1e-6)
    loss.backward()
    assert head.weight.grad is not None
    # descending the gradient moves r towards t − h = (−1, 1)
    step = -head.weight.grad[0]
    assert step[0] < 0 and step[1] > 0
    far = torch.tensor([[-1.0, 0.0]])  # corrupted tail far away: hinge inactive
    assert loss_fn(h, rel, h, far).item() == 0.0


def test_transe_losses_need_a_transe_head() -> None:
    with pytest.raises(ValueError, match="kind 'transe'"):
        TransEMSLoss(RelationHead(["r"], 4))
    with pytest.raises(ValueError, match="kind 'transe'"):
        TransEMarginLoss(RelationHead(["r"], 4))
