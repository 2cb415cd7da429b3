"""The paper's KGE split via PyKEEN: sizes, coverage of valid/test by training, determinism."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from _kge_fixtures import make_cluster_kg
from termnorm.errors import EmptyResultError
from termnorm.kg import KnowledgeGraph
from termnorm.kge import kg_triples, split_triples

pytest.importorskip("pykeen")


def test_parts_partition_the_distinct_triples_with_the_papers_sizes() -> None:
    kg = make_cluster_kg()
    triples, dropped = kg_triples(kg)
    n = len(triples)
    assert dropped == len(kg.relations) - n > 0  # the random edges repeat some pairs
    split = split_triples(kg, valid_fraction=0.04, test_fraction=0.06, seed=0)
    sizes = split.sizes()
    assert sizes == {
        "train": int(0.90 * n),
        "valid": int(0.94 * n) - int(0.90 * n),
        "test": n - int(0.94 * n),
    }
    parts = split.labeled()
    assert len(parts) == n
    assert {tuple(t) for t in parts[["head", "relation", "tail"]].to_numpy()} == {
        tuple(t) for t in triples
    }


def test_valid_and_test_entities_and_relations_occur_in_training() -> None:
    for seed in range(5):
        parts = split_triples(make_cluster_kg(seed), seed=seed).labeled()
        train = parts[parts["part"] == "train"]
        seen = set(train["head"]) | set(train["tail"])
        for part in ("valid", "test"):
            held = parts[parts["part"] == part]
            assert len(held) > 0
            assert set(held["head"]) | set(held["tail"]) <= seen
            assert set(held["relation"]) <= set(train["relation"])


def test_the_split_is_seeded() -> None:
    kg = make_cluster_kg()
    a = split_triples(kg, seed=1).labeled()
    b = split_triples(kg, seed=1).labeled()
    c = split_triples(kg, seed=2).labeled()
    assert a.equals(b)
    assert not np.array_equal(a[a["part"] == "test"].to_numpy(), c[c["part"] == "test"].to_numpy())


def test_a_kg_with_too_few_relations_is_refused(tiny_kg: KnowledgeGraph) -> None:
    with pytest.raises(EmptyResultError, match="too few for a split"):
        split_triples(tiny_kg)


def test_a_cover_that_does_not_fit_into_training_is_refused(tmp_path: Path) -> None:
    # 60 entities in 30 disjoint edges: covering them all needs every triple in training
    relations = [{"head": f"A{i}", "relation": "r", "tail": f"B{i}"} for i in range(30)]
    concepts = [{"concept_id": r[k], "name": r[k]} for r in relations for k in ("head", "tail")]
    terms = [{"concept_id": c["concept_id"], "term": c["name"]} for c in concepts]
    kg = KnowledgeGraph.from_records(concepts, terms, relations)
    with pytest.raises(EmptyResultError, match="every validation/test entity"):
        split_triples(kg, valid_fraction=0.1, test_fraction=0.1)
