"""Link prediction: an identity relation head on vectors where each tail equals its head."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from _eval_fakes import FakeEncoder, kg_from, one_hot
from termnorm.errors import ArtifactMismatchError
from termnorm.evaluation.link_prediction import LinkPredictionEvaluator, rank_metrics
from termnorm.kg import KnowledgeGraph
from termnorm.losses.relation_head import RelationHead

N = 6


def paired_kg(extra: list[tuple[str, str, str]] | None = None) -> KnowledgeGraph:
    concepts = {f"H{i}": (f"head {i}", [], []) for i in range(N)}
    concepts |= {f"T{i}": (f"tail {i}", [], []) for i in range(N)}
    return kg_from(concepts, [(f"H{i}", "r", f"T{i}") for i in range(N)] + (extra or []))


def paired_encoder() -> FakeEncoder:
    """head i and tail i share the i-th axis; different i are orthogonal."""
    table = {f"head {i}": one_hot(i, N) for i in range(N)}
    table |= {f"tail {i}": one_hot(i, N) for i in range(N)}
    return FakeEncoder(table)


def all_triplets(kg: KnowledgeGraph) -> pd.DataFrame:
    return kg.relations.copy()


def test_identity_head_ranks_every_tail_first() -> None:
    kg = paired_kg()
    ev = LinkPredictionEvaluator(kg, RelationHead(["r"], N), triplets=all_triplets(kg))
    metrics = ev(paired_encoder())
    assert metrics["linkpred_hits@1"] == 1.0
    assert metrics["linkpred_mrr"] == 1.0 and metrics["linkpred_mr"] == 1.0
    assert metrics["linkpred_triplets"] == N


def test_filtering_removes_the_other_known_tails() -> None:
    """H0 also relates to T1 (scored equal to T0 = a tie, and T1 ranks first for H1's query)."""
    kg = paired_kg(extra=[("H0", "r", "T1")])
    encoder = paired_encoder()
    encoder.table["tail 1"] = np.array([0.6, 0.8, 0, 0, 0, 0], dtype=np.float32)
    query = pd.DataFrame([{"head": "H0", "relation": "r", "tail": "T0"}])
    raw = LinkPredictionEvaluator(kg, RelationHead(["r"], N), filtered=False, triplets=query)
    filt = LinkPredictionEvaluator(kg, RelationHead(["r"], N), filtered=True, triplets=query)
    assert raw(encoder)["linkpred_mr"] == 1.0  # T0 at cos 1, T1 at 0.6
    encoder.table["tail 1"] = one_hot(0, N)  # now T1 ties with T0
    assert raw(encoder)["linkpred_mr"] == 1.5  # a tie counts half
    assert filt(encoder)["linkpred_mr"] == 1.0  # T1 is a known tail: filtered out


def test_head_is_loaded_from_the_model_folder(tmp_path: Path) -> None:
    kg = paired_kg()
    RelationHead(["r"], N).save(tmp_path)
    encoder = paired_encoder()
    encoder.path = tmp_path
    metrics = LinkPredictionEvaluator(kg, test_fraction=0.5)(encoder)
    assert metrics["linkpred_hits@1"] == 1.0 and metrics["linkpred_triplets"] == N // 2


def test_a_model_without_relation_head_is_refused(tmp_path: Path) -> None:
    encoder = paired_encoder()
    encoder.path = tmp_path
    with pytest.raises(ArtifactMismatchError, match="relation head \\(relations/\\)"):
        LinkPredictionEvaluator(paired_kg())(encoder)


def test_unknown_relations_are_dropped_and_counted() -> None:
    kg = paired_kg(extra=[("H0", "other", "T2")])
    ev = LinkPredictionEvaluator(kg, RelationHead(["r"], N), triplets=all_triplets(kg))
    metrics = ev(paired_encoder())
    assert metrics["linkpred_dropped"] == 1 and metrics["linkpred_triplets"] == N


def test_rank_metrics_by_hand() -> None:
    m = rank_metrics(np.array([1.0, 2.0, 4.0, 20.0]))
    assert m["hits@1"] == 0.25 and m["hits@3"] == 0.5 and m["hits@10"] == 0.75
    assert m["mr"] == pytest.approx(6.75)
    assert m["mrr"] == pytest.approx((1 + 0.5 + 0.25 + 0.05) / 4)


def test_a_head_of_another_width_is_refused() -> None:
    kg = paired_kg()
    ev = LinkPredictionEvaluator(kg, RelationHead(["r"], N + 2), triplets=all_triplets(kg))
    with pytest.raises(ArtifactMismatchError, match="8-d vectors but the model gives 6-d"):
        ev(paired_encoder())


def test_a_held_out_triplet_absent_from_the_kg_ranks_first_when_filtered() -> None:
    """The KG was split: (H0, r, T0) is held out, so filtering has no known tail to remove,
    and the target must not count as its own tie (rank 1, not 1.5)."""
    kg = kg_from(
        {
            f"{x}{i}": (f"{'head' if x == 'H' else 'tail'} {i}", [], [])
            for x in "HT"
            for i in range(N)
        },
        [(f"H{i}", "r", f"T{i}") for i in range(1, N)],
    )
    held_out = pd.DataFrame([{"head": "H0", "relation": "r", "tail": "T0"}])
    ev = LinkPredictionEvaluator(kg, RelationHead(["r"], N), triplets=held_out)
    assert ev(paired_encoder())["linkpred_mr"] == 1.0
