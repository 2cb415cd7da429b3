"""Semantic-type classification auxiliary loss."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from termnorm.losses import SemanticTypeLoss


def test_one_hot_targets_give_cross_entropy_and_untyped_rows_are_skipped() -> None:
    torch.manual_seed(0)
    loss_fn = SemanticTypeLoss(dim=4, n_types=3)
    e = torch.randn(5, 4)
    targets = torch.zeros(5, 3)
    targets[0, 1] = targets[1, 2] = targets[2, 0] = 1.0  # rows 3, 4 have no type
    got = loss_fn(e, targets)
    expected = F.cross_entropy(loss_fn.classifier(e[:3]), torch.tensor([1, 2, 0]))
    assert got.item() == pytest.approx(expected.item(), rel=1e-6)


def test_several_types_get_a_uniform_target_and_training_lowers_the_loss() -> None:
    torch.manual_seed(1)
    loss_fn = SemanticTypeLoss(dim=4, n_types=2)
    e = torch.randn(4, 4)
    targets = torch.tensor([[0.5, 0.5], [1.0, 0.0], [0.0, 1.0], [0.0, 0.0]])
    opt = torch.optim.SGD(loss_fn.parameters(), lr=0.5)
    first = loss_fn(e, targets).item()
    for _ in range(30):
        opt.zero_grad()
        loss_fn(e, targets).backward()
        opt.step()
    assert loss_fn(e, targets).item() < first
    assert SemanticTypeLoss(4, 2)(e, torch.zeros(4, 2)).item() == 0.0
