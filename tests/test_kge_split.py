"""The paper's KGE split via PyKEEN: sizes, coverage of valid/test by training, determinism."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from _kge_fixtures import make_cluster_kg, make_tree_kg
from termnorm.errors import EmptyResultError
from termnorm.kg import KnowledgeGraph
from termnorm.kge import kg_triples, split_triples
from termnorm.kge.split import KEEPING_ENDS, hold_out_keeping_ends

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


def test_a_kg_where_no_triple_can_be_held_out_is_refused(tmp_path: Path) -> None:
    # 60 entities in 30 disjoint edges: covering them all needs every triple in training
    relations = [{"head": f"A{i}", "relation": "r", "tail": f"B{i}"} for i in range(30)]
    concepts = [{"concept_id": r[k], "name": r[k]} for r in relations for k in ("head", "tail")]
    terms = [{"concept_id": c["concept_id"], "term": c["name"]} for c in concepts]
    kg = KnowledgeGraph.from_records(concepts, terms, relations)
    with pytest.raises(EmptyResultError, match=r"30 triples cannot be split: holding out any"):
        split_triples(kg, valid_fraction=0.1, test_fraction=0.1)


def test_a_tree_keeps_its_leaf_edges_in_training_and_reports_them() -> None:
    kg = make_tree_kg()  # 136 triples: 120 leaf edges, 12 block and 4 chapter edges
    n = len(kg_triples(kg)[0])
    split = split_triples(kg)  # the default 4 % / 6 %
    assert split.method == KEEPING_ENDS
    parts = split.labeled()
    train = parts[parts["part"] == "train"]
    held = parts[parts["part"] != "train"]
    leaves = {h for h in kg.relations["head"] if h.count(".") == 2}
    assert leaves <= set(train["head"])  # no leaf edge left training
    assert set(held["head"]) | set(held["tail"]) <= set(train["head"]) | set(train["tail"])
    # of the 16 inner edges each chapter keeps one of its four (3 block edges, 1 to the root)
    assert len(held) == 16 - 4
    want = n - int(0.90 * n)  # 14 > 12: every triple was visited, the rest stayed
    assert split.kept_in_training == n - len(held)
    sizes = split.sizes()
    assert sizes["valid"] >= 1 and sizes["test"] >= 1 and sum(sizes.values()) == n
    assert sizes["valid"] == round(
        12 * (int(0.94 * n) - int(0.9 * n)) / want
    )  # the requested 5 : 9, scaled to 12
    again = split_triples(kg).labeled()
    assert again.equals(parts)  # seeded
    assert not split_triples(kg, seed=5).labeled().equals(parts)


def test_held_out_rows_leave_every_entity_and_relation_in_training() -> None:
    mapped = np.array([[0, 0, 1], [0, 0, 2], [1, 1, 2], [2, 0, 3], [3, 1, 0], [1, 0, 1]])
    for seed in range(10):
        held, kept = hold_out_keeping_ends(mapped, seed, limit=6)
        train = np.delete(mapped, held, axis=0)
        assert set(train[:, [0, 2]].ravel()) == {0, 1, 2, 3}
        assert set(train[:, 1]) == {0, 1}
        assert kept == len(train)  # with no limit reached, every row was visited
    held, kept = hold_out_keeping_ends(mapped, 0, limit=1)
    assert len(held) == 1 and kept < len(mapped) - 1
