"""Clustering pairs: F1 of "cos ≥ θ ⇒ synonyms", θ tuned on concepts disjoint from the test."""

from __future__ import annotations

import numpy as np
import pytest

from _eval_fakes import FakeEncoder, kg_from
from termnorm.errors import EmptyResultError
from termnorm.evaluation.clustering import DEFAULT_THRESHOLDS, ClusteringEvaluator, sweep
from termnorm.kg import KnowledgeGraph

N_CONCEPTS = 12


def synonym_kg(n: int = N_CONCEPTS) -> KnowledgeGraph:
    return kg_from({f"X:{i:02d}": (f"c{i} a", [f"c{i} b", f"c{i} c"], ["t"]) for i in range(n)})


def separated_encoder(n: int = N_CONCEPTS) -> FakeEncoder:
    """Every term of concept i is the i-th unit vector: synonyms at cos 1, others at 0."""
    table = {f"c{i} {s}": np.eye(n)[i] for i in range(n) for s in "abc"}
    return FakeEncoder(table)


def test_sweep_counts_pairs_by_hand() -> None:
    # rows 0,1 same label at cos 0.8; row 2 another label at cos 0.6 from row 0, 0 from row 1
    v = np.array([[1.0, 0.0, 0.0], [0.8, 0.6, 0.0], [0.6, -0.8, 0.0]], dtype=np.float32)
    result = sweep(v, np.array([0, 0, 1]), [0.5, 0.7, 0.9])
    assert result.pairs == 3 and result.positive_pairs == 1
    assert result.precision == pytest.approx([0.5, 1.0, 0.0])
    assert result.recall == pytest.approx([1.0, 1.0, 0.0])
    assert result.f1 == pytest.approx([2 / 3, 1.0, 0.0])


def test_perfectly_separated_vectors_reach_f1_one() -> None:
    ev = ClusteringEvaluator(synonym_kg())
    metrics = ev(separated_encoder())
    assert metrics["clustering_f1"] == pytest.approx(1.0)
    assert metrics["clustering_precision"] == metrics["clustering_recall"] == pytest.approx(1.0)
    assert metrics["clustering_threshold"] in DEFAULT_THRESHOLDS
    # 6 test concepts × 3 terms: 3 positive pairs each, all 153 pairs are candidates
    assert metrics["clustering_test_positive_pairs"] == 18
    assert metrics["clustering_test_pairs"] == 18 * 17 / 2


def test_split_is_by_concept_disjoint_and_seeded() -> None:
    a = ClusteringEvaluator(synonym_kg(), seed=1)
    b = ClusteringEvaluator(synonym_kg(), seed=1)
    c = ClusteringEvaluator(synonym_kg(), seed=2)
    assert (a.tune_concepts, a.test_concepts) == (b.tune_concepts, b.test_concepts)
    assert (a.tune_concepts, a.test_concepts) != (c.tune_concepts, c.test_concepts)
    assert not set(a.tune_concepts) & set(a.test_concepts)
    assert len(a.tune_concepts) + len(a.test_concepts) == N_CONCEPTS


def test_sampling_caps_concepts_per_split() -> None:
    ev = ClusteringEvaluator(synonym_kg(40), max_concepts=5, seed=0)
    assert len(ev.tune_concepts) == len(ev.test_concepts) == 5


def test_threshold_comes_from_the_tuning_split_only() -> None:
    """Tuning: synonyms at cos 0.95, other concepts at 0.80, so θ > 0.80 is best there.
    Held-out: synonyms at 0.70, others at 0. A θ read off the held-out split would give
    F1 = 1; the honest protocol applies the tuned θ and gets F1 = 0."""
    kg = synonym_kg()
    ev = ClusteringEvaluator(kg, seed=0)
    dim = 1 + 4 * N_CONCEPTS
    eye = np.eye(dim)
    table = {}
    for cid in kg.concepts["concept_id"]:
        i = int(cid.split(":")[1])
        for j, s in enumerate("abc"):
            own = eye[1 + N_CONCEPTS + 3 * i + j]
            concept = eye[1 + i]
            if cid in ev.tune_concepts:  # shared 0.80 + concept 0.15 + own 0.05
                v = np.sqrt(0.8) * eye[0] + np.sqrt(0.15) * concept + np.sqrt(0.05) * own
            else:  # concept 0.70 + own 0.30
                v = np.sqrt(0.7) * concept + np.sqrt(0.3) * own
            table[f"c{i} {s}"] = v
    encoder = FakeEncoder(table)
    result = ev.evaluate(encoder)
    assert result.threshold == pytest.approx(0.81)
    assert result.tune.f1[result.tune.best()] == pytest.approx(1.0)
    assert max(result.test.f1) == pytest.approx(1.0)
    assert result.f1 == 0.0
    # the first texts encoded are the tuning terms only
    tune_prefixes = {f"c{int(c.split(':')[1])}" for c in ev.tune_concepts}
    assert {t.split()[0] for t in encoder.calls[0]} == tune_prefixes


def test_no_synonyms_is_an_error() -> None:
    kg = kg_from({f"X:{i}": (f"c{i}", [], ["t"]) for i in range(8)})
    with pytest.raises(EmptyResultError, match="no synonym pair"):
        ClusteringEvaluator(kg).evaluate(separated_encoder())


def test_too_few_concepts_is_an_error() -> None:
    with pytest.raises(EmptyResultError, match="at least 4 concepts"):
        ClusteringEvaluator(synonym_kg(3))


def test_tiny_bert_runs(tiny_kg: KnowledgeGraph, tiny_encoder) -> None:
    metrics = ClusteringEvaluator(tiny_kg)(tiny_encoder)
    assert 0.0 <= metrics["clustering_f1"] <= 1.0
    assert 0.60 <= metrics["clustering_threshold"] <= 0.98
