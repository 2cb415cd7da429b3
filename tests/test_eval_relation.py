"""Relation classification: separable features, split honesty, fine-tune mode."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from _eval_fakes import FakeEncoder, kg_from, one_hot
from termnorm.errors import EmptyResultError
from termnorm.evaluation.embedding import seeded_split
from termnorm.evaluation.relation_classification import (
    RelationClassificationEvaluator,
    triplets_of,
)
from termnorm.kg import KnowledgeGraph

N = 20  # heads H00..H19, tails T00..T19; relation decided by the head's group


def relation_kg(labels: dict[int, str] | None = None) -> KnowledgeGraph:
    concepts = {f"H{i:02d}": (f"head {i}", [], []) for i in range(N)}
    concepts |= {f"T{i:02d}": (f"tail {i}", [], []) for i in range(N)}
    labels = labels or {}
    rel = [
        (f"H{i:02d}", labels.get(i, "cause" if i % 2 else "treat"), f"T{i:02d}") for i in range(N)
    ]
    return kg_from(concepts, rel)


def grouped_encoder() -> FakeEncoder:
    """Odd heads on axis 0, even heads on axis 1, tails on their own axes: separable."""
    dim = 2 + N
    table = {f"head {i}": one_hot(i % 2, dim) for i in range(N)}
    table |= {f"tail {i}": one_hot(2 + i, dim) for i in range(N)}
    return FakeEncoder(table)


def test_separable_features_are_classified_perfectly() -> None:
    ev = RelationClassificationEvaluator(relation_kg())
    metrics = ev(grouped_encoder())
    assert ev.primary_metric == "relation_accuracy"
    assert metrics["relation_accuracy"] == 1.0
    assert metrics["relation_train_accuracy"] == 1.0
    assert metrics["relation_labels"] == 2
    assert (metrics["relation_train"], metrics["relation_test"]) == (16, 4)


def test_the_classifier_never_trains_on_the_test_split() -> None:
    """Test triplets get the label their features do not predict: a model that had seen them
    could not score 0, one trained on the training split only must."""
    _, test = seeded_split(N, 0.2, 0)
    flipped = {int(i): ("treat" if i % 2 else "cause") for i in test}
    metrics = RelationClassificationEvaluator(relation_kg(flipped))(grouped_encoder())
    assert metrics["relation_accuracy"] == 0.0
    assert metrics["relation_train_accuracy"] == 1.0


def test_split_is_deterministic_and_disjoint() -> None:
    train, test = seeded_split(100, 0.2, 7)
    train2, test2 = seeded_split(100, 0.2, 7)
    assert np.array_equal(train, train2) and np.array_equal(test, test2)
    assert len(test) == 20 and not set(train) & set(test)
    assert set(train) | set(test) == set(range(100))
    assert not np.array_equal(seeded_split(100, 0.2, 8)[1], test)
    with pytest.raises(ValueError, match="test_fraction"):
        seeded_split(10, 1.0, 0)


def test_dangling_and_duplicate_triplets_are_dropped() -> None:
    kg = kg_from(
        {"A": ("a", [], []), "B": ("b", [], [])},
        [("A", "r", "B"), ("A", "r", "B"), ("A", "r", "Z"), ("A", "r", "A")],
    )
    rows, dropped = triplets_of(kg)
    assert len(rows) == 1 and dropped == 3


def test_too_few_triplets_is_an_error(tiny_kg: KnowledgeGraph) -> None:
    kg = kg_from({"A": ("a", [], []), "B": ("b", [], [])}, [("A", "r", "B")])
    with pytest.raises(EmptyResultError, match="at least 2 relation triplets"):
        RelationClassificationEvaluator(kg)


def test_fine_tune_mode_trains_a_copy(tiny_kg: KnowledgeGraph, tiny_encoder) -> None:
    before = {k: v.clone() for k, v in tiny_encoder.model.state_dict().items()}
    ev = RelationClassificationEvaluator(tiny_kg, mode="fine-tune", epochs=2, test_fraction=0.4)
    metrics = ev(tiny_encoder)
    assert 0.0 <= metrics["relation_accuracy"] <= 1.0
    after = tiny_encoder.model.state_dict()
    assert all(torch.equal(before[k], after[k]) for k in before)


def test_fine_tune_mode_needs_a_transformer() -> None:
    ev = RelationClassificationEvaluator(relation_kg(), mode="fine-tune", epochs=1)
    with pytest.raises(TypeError, match="fine-tune mode needs a TermEncoder"):
        ev(grouped_encoder())


def test_max_per_label_balances_the_labels() -> None:
    labels = {i: "rare" for i in range(3)}  # 3 rare, 9 cause, 8 treat
    ev = RelationClassificationEvaluator(relation_kg(labels), max_per_label=3, seed=1)
    counts = ev.triplets["relation"].value_counts().to_dict()
    assert counts == {"rare": 3, "cause": 3, "treat": 3}
    again = RelationClassificationEvaluator(relation_kg(labels), max_per_label=3, seed=1)
    assert ev.triplets.equals(again.triplets)
