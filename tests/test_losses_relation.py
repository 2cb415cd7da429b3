"""Relation head and term–relation–term MS loss."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

from termnorm.errors import ArtifactMismatchError
from termnorm.losses import (
    MultiSimilarityLoss,
    RelationHead,
    RelationKind,
    RelationLoss,
    multi_similarity_from_similarity,
)


def test_identity_initialised_head_scores_plain_cosine() -> None:
    torch.manual_seed(0)
    h, t = torch.randn(5, 8), torch.randn(7, 8)
    head = RelationHead(["isa", "part_of"], 8)
    got = head.score(h, torch.tensor([0, 1, 0, 1, 1]), t)
    torch.testing.assert_close(got, F.normalize(h, dim=-1) @ F.normalize(t, dim=-1).T)


def test_matrix_head_applies_m_transpose_to_the_head() -> None:
    torch.manual_seed(1)
    head = RelationHead(["r"], 4)
    m = torch.randn(4, 4)
    with torch.no_grad():
        head.weight[0] = m
    h, t = torch.randn(3, 4), torch.randn(2, 4)
    expected = F.cosine_similarity((m.T @ h.T).T.unsqueeze(1), t.unsqueeze(0), dim=-1)
    torch.testing.assert_close(head.score(h, torch.zeros(3, dtype=torch.long), t), expected)


def test_matrix_projection_of_mixed_relations_matches_per_row_products() -> None:
    torch.manual_seed(4)
    head = RelationHead(["a", "b", "c"], 5)
    with torch.no_grad():
        head.weight.copy_(torch.randn(3, 5, 5))
    h = torch.randn(6, 5)
    rel = torch.tensor([2, 0, 2, 2, 0, 0])  # "b" unused
    got = head.project(h, rel)
    expected = torch.stack([head.weight[r].T @ h[i] for i, r in enumerate(rel.tolist())])
    torch.testing.assert_close(got, expected)
    got.sum().backward()
    assert head.weight.grad is not None
    assert torch.count_nonzero(head.weight.grad[1]) == 0  # only used matrices get a gradient
    assert torch.count_nonzero(head.weight.grad[0]) > 0


def test_identity_relation_loss_equals_ms_loss_on_cosine() -> None:
    torch.manual_seed(2)
    heads, tails = torch.randn(8, 6), torch.randn(8, 6)
    tail_labels = torch.tensor([0, 0, 1, 1, 2, 2, 3, 3])
    loss = RelationLoss(RelationHead(["a", "b"], 6))
    got = loss(heads, torch.tensor([0, 0, 1, 1, 0, 0, 1, 1]), tails, tail_labels)
    sim = F.normalize(heads, dim=-1) @ F.normalize(tails, dim=-1).T
    pos = tail_labels[:, None] == tail_labels[None, :]  # j = i is a positive
    expected = MultiSimilarityLoss().from_similarity(sim, pos, ~pos)
    assert got.item() == pytest.approx(expected.item(), rel=1e-6)


def test_synonym_rows_are_candidates_not_anchors_and_a_relation_less_batch_gives_zero() -> None:
    torch.manual_seed(3)
    heads = torch.randn(4, 6, requires_grad=True)
    tails = torch.randn(4, 6)
    loss_fn = RelationLoss(RelationHead(["a"], 6))
    rel = torch.tensor([0, 0, -1, -1])
    labels = torch.tensor([5, 5, 7, 7])
    part = loss_fn(heads, rel, tails, labels)
    # anchors: the 2 relation rows; candidates: all 4 tails (the synonym rows' are negatives)
    sim = F.normalize(heads[:2], dim=-1) @ F.normalize(tails, dim=-1).T  # [2, 4]
    pos = torch.tensor([[True, True, False, False]] * 2)
    assert part.item() == pytest.approx(
        multi_similarity_from_similarity(sim, pos, ~pos).item(), rel=1e-6
    )
    none = loss_fn(heads, torch.full((4,), -1), tails, labels)
    assert none.item() == 0.0
    none.backward()  # still differentiable: DDP sees every parameter used
    assert loss_fn.head.weight.grad is not None
    assert torch.count_nonzero(loss_fn.head.weight.grad) == 0


def test_training_the_matrix_moves_heads_towards_their_tails() -> None:
    torch.manual_seed(4)
    heads, tails = torch.randn(8, 6), torch.randn(8, 6)
    labels = torch.tensor([0, 0, 1, 1, 2, 2, 3, 3])
    rel = torch.zeros(8, dtype=torch.long)
    loss_fn = RelationLoss(RelationHead(["r"], 6))
    opt = torch.optim.Adam(loss_fn.parameters(), lr=0.05)
    first = loss_fn(heads, rel, tails, labels).item()
    for _ in range(50):
        opt.zero_grad()
        loss_fn(heads, rel, tails, labels).backward()
        opt.step()
    assert loss_fn(heads, rel, tails, labels).item() < first


@pytest.mark.parametrize("kind", list(RelationKind))
def test_head_save_load_round_trip(tmp_path: Path, kind: RelationKind) -> None:
    torch.manual_seed(5)
    head = RelationHead(["isa", "has_phenotype"], 4, kind)
    with torch.no_grad():
        head.weight.add_(torch.randn_like(head.weight))
    folder = head.save(tmp_path)
    assert (folder / "config.json").is_file() and (folder / "weights.safetensors").is_file()
    back = RelationHead.load(tmp_path)
    assert back.kind is kind and back.labels == ["isa", "has_phenotype"] and back.dim == 4
    h, t = torch.randn(3, 4), torch.randn(5, 4)
    idx = back.indices(["isa", "has_phenotype", "isa"])
    torch.testing.assert_close(back.score(h, idx, t), head.score(h, idx, t))


def test_head_errors(tmp_path: Path) -> None:
    with pytest.raises(ArtifactMismatchError, match="no relation head"):
        RelationHead.load(tmp_path)
    with pytest.raises(KeyError, match="not one of"):
        RelationHead(["isa"], 4).indices(["part_of"])
