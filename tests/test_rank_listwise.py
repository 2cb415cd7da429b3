"""List-wise ranker loss on hand-made logits, and list-wise training of a tiny cross-encoder."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch

from termnorm.losses import ListwiseLoss
from termnorm.search.rank import (
    KeywordCrossEncoder,
    RankerTrainConfig,
    RankPair,
    train_cross_encoder,
)
from termnorm.search.stages.ranker.train_loop import listwise_batches


def softmax(xs: list[float]) -> list[float]:
    z = sum(math.exp(x) for x in xs)
    return [math.exp(x) / z for x in xs]


def test_one_gold_is_cross_entropy() -> None:
    logits = torch.tensor([[2.0, 0.0, -1.0]])
    gold = torch.tensor([[False, True, False]])
    expected = -math.log(softmax([2.0, 0.0, -1.0])[1])
    assert float(ListwiseLoss()(logits, gold)) == pytest.approx(expected, rel=1e-6)


def test_two_golds_sum_their_probabilities() -> None:
    logits = torch.tensor([[2.0, 0.0, -1.0]])
    gold = torch.tensor([[True, False, True]])
    p = softmax([2.0, 0.0, -1.0])
    assert float(ListwiseLoss()(logits, gold)) == pytest.approx(-math.log(p[0] + p[2]), rel=1e-6)


def test_a_query_without_gold_is_left_out_and_padding_is_ignored() -> None:
    logits = torch.tensor([[1.0, 0.5, 9.0], [3.0, 3.0, 3.0]], requires_grad=True)
    gold = torch.tensor([[True, False, False], [False, False, False]])
    mask = torch.tensor([[True, True, False], [True, True, True]])  # 9.0 is padding
    loss = ListwiseLoss()(logits, gold, mask)
    assert float(loss.detach()) == pytest.approx(-math.log(softmax([1.0, 0.5])[0]), rel=1e-6)
    loss.backward()
    assert logits.grad is not None and float(logits.grad[1].abs().sum()) == 0.0
    none = ListwiseLoss()(logits, torch.zeros_like(gold))  # no gold at all: 0, still a graph
    assert float(none.detach()) == 0.0 and none.requires_grad
    with pytest.raises(ValueError, match="differ"):
        ListwiseLoss()(logits, gold[:, :2])


def test_listwise_batches_keep_queries_whole() -> None:
    pairs = [RankPair(f"q{g}", f"c{i}", float(i == 0), g) for g in range(5) for i in range(3)]
    batches = listwise_batches(pairs, batch_size=4, seed=0)
    assert sorted(i for b in batches for g in b for i in g) == list(range(15))
    assert all(len({pairs[i].group for i in g}) == 1 for b in batches for g in b)
    assert all(len(b) == 2 for b in batches[:-1])  # 3 pairs < 4: a second query joins
    with pytest.raises(ValueError, match=r"needs each pair's query"):
        listwise_batches([RankPair("q", "c", 1.0)], 4, 0)


def test_listwise_training_learns_a_tiny_task(tiny_bert_path: Path) -> None:
    torch.manual_seed(0)
    model = KeywordCrossEncoder.from_pretrained(tiny_bert_path, plain=True, max_length=16)
    pairs = [
        RankPair(f"alpha {q}", text, float(text.startswith("alpha")), q)
        for q in range(6)
        for text in ("alpha beta", "gamma delta", "epsilon zeta")
    ]
    config = RankerTrainConfig(epochs=8, lr=5e-4, head_lr=5e-3, batch_size=6, loss="listwise")
    stats = train_cross_encoder(model, pairs, config)
    assert stats.epoch_loss[-1] < stats.epoch_loss[0]
    with pytest.raises(ValueError, match="unknown ranker loss 'pairwise'"):
        RankerTrainConfig(loss="pairwise").validate()
