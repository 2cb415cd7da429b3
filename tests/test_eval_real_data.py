"""Embedding evaluators on real data with the real default model (slow).

Assertions compare the pretrained model with a random-vector encoder on the same protocol
(a property that must hold), never with numbers copied from a run.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from _eval_fakes import FakeEncoder
from conftest import require_benchmarks
from termnorm.kg import KnowledgeGraph

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def base_model():
    from termnorm.encoders import TermEncoder

    return TermEncoder.load(None, device="cpu")


def random_encoder(dim: int = 384) -> FakeEncoder:
    """Every text gets a seeded random vector (the empty table makes all texts unknown)."""
    return FakeEncoder({}, dim=dim)


def sub_kg(kg: KnowledgeGraph, n: int, seed: int = 0) -> KnowledgeGraph:
    """A seeded sample of ``n`` concepts with their terms (relations dropped)."""
    rng = np.random.default_rng(seed)
    ids = set(rng.choice(kg.concepts["concept_id"].to_numpy(), n, replace=False))
    return KnowledgeGraph.from_records(
        kg.concepts[kg.concepts["concept_id"].isin(ids)],
        kg.terms[kg.terms["concept_id"].isin(ids)],
    )


def test_relatedness_of_the_base_model(base_model) -> None:
    from termnorm.evaluation.relatedness import RelatednessEvaluator

    for parts in (("mayosrs", "MiniMayoSRS.csv"), ("umnsrs", "umnsrs-sim.txt")):
        evaluator = RelatednessEvaluator(require_benchmarks(*parts))
        metrics = evaluator(base_model)
        assert metrics["relatedness_coverage"] == 1.0
        assert metrics["relatedness_spearman"] > evaluator(random_encoder())["relatedness_spearman"]


def test_clustering_on_medic_beats_random_vectors(base_model) -> None:
    from termnorm.evaluation.clustering import ClusteringEvaluator
    from termnorm.kg.build import SourceSpec, build_kg

    path = require_benchmarks("medic", "medic_06Jul2012.txt")
    kg, _ = build_kg([SourceSpec("medic", Path(path), {})])
    evaluator = ClusteringEvaluator(kg, max_concepts=150)
    base = evaluator(base_model)["clustering_f1"]
    assert base > evaluator(random_encoder())["clustering_f1"]


def test_mcsm_on_hpo_branches_beats_random_vectors(base_model) -> None:
    from termnorm.evaluation.mcsm import MCSMEvaluator, mcsm_max
    from termnorm.kg.build import SourceSpec, build_kg

    kg, _ = build_kg([SourceSpec("hpo", None, {"with_annotations": False})])
    evaluator = MCSMEvaluator(sub_kg(kg, 1500), k=40, min_concepts=20)
    base = evaluator(base_model)["mcsm_mean"]
    assert evaluator(random_encoder())["mcsm_mean"] < base <= mcsm_max(40)
