"""MCSM on vectors where the neighbourhoods, hence the scores, are known in advance."""

from __future__ import annotations

import math

import numpy as np
import pytest

from _eval_fakes import FakeEncoder, kg_from
from termnorm.errors import EmptyResultError
from termnorm.evaluation.mcsm import MCSMEvaluator, mcsm_max, nearest_others
from termnorm.kg import KnowledgeGraph

# 3 cardio, 3 lung, 4 other concepts; each name is its type axis plus a small own axis
TYPES = {
    "C1": "cardio",
    "C2": "cardio",
    "C3": "cardio",
    "L1": "lung",
    "L2": "lung",
    "L3": "lung",
    "O1": "other",
    "O2": "other",
    "O3": "other",
    "O4": "other",
}
AXES = {"cardio": 0, "lung": 1, "other": 2}


def typed_kg() -> KnowledgeGraph:
    return kg_from({cid: (f"name {cid}", [f"syn {cid}"], [t]) for cid, t in TYPES.items()})


def clustered_encoder() -> FakeEncoder:
    """Same-type concepts at cosine ≈ 0.99, different types at 0."""
    dim = 3 + len(TYPES)
    table = {}
    for i, (cid, t) in enumerate(TYPES.items()):
        v = np.zeros(dim)
        v[AXES[t]] = 1.0
        v[3 + i] = 0.1
        table[f"name {cid}"] = v
        table[f"syn {cid}"] = v
    return FakeEncoder(table)


def test_max_is_the_discounted_sum() -> None:
    assert mcsm_max(1) == pytest.approx(1.0)
    assert mcsm_max(2) == pytest.approx(1 + 1 / math.log2(3))
    assert mcsm_max(40) == pytest.approx(11.09, abs=0.005)


def test_separated_types_reach_the_analytic_maximum() -> None:
    metrics = MCSMEvaluator(typed_kg(), k=2)(clustered_encoder())
    for t in AXES:
        assert metrics[f"mcsm_{t}"] == pytest.approx(mcsm_max(2))
        assert metrics[f"mcsm_{t}_std"] == pytest.approx(0.0)
    assert metrics["mcsm_mean"] == pytest.approx(mcsm_max(2))
    assert metrics["mcsm_mean_std"] == pytest.approx(0.0)
    assert metrics["mcsm_concepts"] == 10


def test_neighbours_beyond_the_type_count_score_zero() -> None:
    """k = 3: a cardio concept has only 2 cardio neighbours, its 3rd neighbour scores 0."""
    result = MCSMEvaluator(typed_kg(), k=3).evaluate(clustered_encoder())
    scores = {t.semantic_type: t.mean for t in result.types}
    assert scores["cardio"] == pytest.approx(mcsm_max(2))
    assert scores["lung"] == pytest.approx(mcsm_max(2))
    assert scores["other"] == pytest.approx(mcsm_max(3))


def test_mean_of_synonyms_option_and_type_selection() -> None:
    ev = MCSMEvaluator(typed_kg(), k=2, vectors="mean", types=["lung"])
    metrics = ev(clustered_encoder())
    assert set(k for k in metrics if k.endswith("_std")) == {"mcsm_mean_std", "mcsm_lung_std"}
    assert metrics["mcsm_lung"] == pytest.approx(mcsm_max(2))


def test_unrelated_vectors_score_below_the_maximum() -> None:
    """Type axis removed: neighbours are arbitrary, so the score drops."""
    enc = FakeEncoder({f"name {cid}": np.eye(10)[i] for i, cid in enumerate(TYPES)})
    metrics = MCSMEvaluator(typed_kg(), k=2)(enc)
    assert 0.0 <= metrics["mcsm_mean"] < mcsm_max(2)


def test_sampling_is_seeded() -> None:
    enc = clustered_encoder()
    a = MCSMEvaluator(typed_kg(), k=2, max_concepts_per_type=2, seed=3).evaluate(enc)
    b = MCSMEvaluator(typed_kg(), k=2, max_concepts_per_type=2, seed=3).evaluate(enc)
    assert [t.concepts for t in a.types] == [2, 2, 2]
    assert a.to_dict() == b.to_dict()


def test_tiny_bert_runs_within_bounds(tiny_kg: KnowledgeGraph, tiny_encoder) -> None:
    metrics = MCSMEvaluator(tiny_kg, k=40)(tiny_encoder)
    assert 0.0 <= metrics["mcsm_mean"] <= metrics["mcsm_max"]
    assert metrics["mcsm_max"] == pytest.approx(mcsm_max(9))  # 10 concepts: 9 neighbours


def test_a_kg_without_types_is_refused() -> None:
    kg = kg_from({"A": ("a", [], []), "B": ("b", [], [])})
    with pytest.raises(EmptyResultError, match="semantic types"):
        MCSMEvaluator(kg)


def test_unknown_type_and_bad_k_are_refused() -> None:
    with pytest.raises(ValueError, match="not in the KG"):
        MCSMEvaluator(typed_kg(), types=["kidney"])
    with pytest.raises(ValueError, match="k must be"):
        MCSMEvaluator(typed_kg(), k=0)


def test_an_empty_name_is_skipped_not_crashed_on() -> None:
    concepts = {cid: (f"name {cid}", [], [t]) for cid, t in TYPES.items()}
    concepts["O4"] = ("", [], ["other"])
    result = MCSMEvaluator(kg_from(concepts), k=2).evaluate(clustered_encoder())
    assert result.skipped_concepts == 1
    assert {t.semantic_type: t.concepts for t in result.types}["other"] == 3


@pytest.mark.parametrize("k", [1, 3, 7])
def test_nearest_others_leave_the_query_out_and_break_ties_by_index(k: int) -> None:
    rng = np.random.default_rng(3)
    vectors = rng.integers(-1, 2, size=(8, 3)).astype(np.float32)  # many exact ties
    rows = np.array([0, 2, 5, 7])
    got = nearest_others(vectors, rows, k)
    for row, ids in zip(rows, got, strict=True):
        scores = vectors @ vectors[row]
        others = [j for j in range(len(vectors)) if j != row]
        expected = sorted(others, key=lambda j: (-scores[j], j))[:k]
        assert ids.tolist() == expected
    assert nearest_others(vectors, np.array([], dtype=np.int64), k).shape == (0, k)
