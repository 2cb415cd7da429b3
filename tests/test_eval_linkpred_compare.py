"""KGEs and relation heads ranked side by side on the same triplets and candidates."""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from _cli import run_main
from _eval_fakes import FakeEncoder, kg_from, one_hot
from _kge_fixtures import save_cluster_kg
from termnorm.errors import ArtifactMismatchError, EmptyResultError
from termnorm.evaluation.link_prediction import LinkPredictionEvaluator
from termnorm.evaluation.linkpred_compare import EncoderTailScorer, compare_link_prediction
from termnorm.kg import KnowledgeGraph
from termnorm.losses.relation_head import RelationHead

N = 6


def paired_kg() -> KnowledgeGraph:
    concepts = {f"H{i}": (f"head {i}", [], []) for i in range(N)}
    concepts |= {f"T{i}": (f"tail {i}", [], []) for i in range(N)}
    return kg_from(concepts, [(f"H{i}", "r", f"T{i}") for i in range(N)])


class TableScorer:
    """Scores from a dict ``(head, candidate) -> score`` (0 elsewhere); knows ``concepts``."""

    def __init__(self, scores: dict[tuple[str, str], float], concepts: set[str]) -> None:
        self.scores, self._concepts, self.labels = scores, concepts, ["r"]

    def concepts(self) -> set[str]:
        return self._concepts

    def score_tails(
        self, heads: Sequence[str], relations: Sequence[str], candidates: Sequence[str]
    ) -> np.ndarray:
        return np.array([[self.scores.get((h, c), 0.0) for c in candidates] for h in heads])


def test_known_rankings_on_one_candidate_set() -> None:
    kg = paired_kg()
    everything = set(kg.concepts["concept_id"])
    right = TableScorer({(f"H{i}", f"T{i}"): 1.0 for i in range(N)}, everything)
    # ranks T_i second: T_(i+1) scores higher
    second = TableScorer(
        {(f"H{i}", f"T{i}"): 0.5 for i in range(N)}
        | {(f"H{i}", f"T{(i + 1) % N}"): 1.0 for i in range(N)},
        everything - {"T5"},  # it cannot score T5: that triplet is dropped for everyone
    )
    result = compare_link_prediction(kg, {"right": right, "second": second}, kg.relations)
    assert result.triplets == N - 1 and result.dropped == 1
    assert result.candidates == 2 * N - 1
    assert result.metrics["right"]["mrr"] == 1.0 and result.metrics["right"]["hits@1"] == 1.0
    # H4's competitor T5 is not a candidate, so T4 ranks first there; the others second
    assert result.metrics["second"]["mr"] == pytest.approx((4 * 2 + 1) / 5)


def test_filtering_removes_the_other_known_tails_and_ties_count_half() -> None:
    kg = kg_from(
        {"H": ("h", [], []), "A": ("a", [], []), "B": ("b", [], []), "C": ("c", [], [])},
        [("H", "r", "A"), ("H", "r", "B")],
    )
    scorer = TableScorer({("H", "A"): 0.5, ("H", "B"): 1.0, ("H", "C"): 0.5}, {"H", "A", "B", "C"})
    only_a = kg.relations[kg.relations["tail"] == "A"]
    filtered = compare_link_prediction(kg, {"s": scorer}, only_a)
    raw = compare_link_prediction(kg, {"s": scorer}, only_a, filtered=False)
    assert filtered.metrics["s"]["mr"] == 1.5  # B filtered out, tie with C
    assert raw.metrics["s"]["mr"] == 2.5  # B above, tie with C


def test_encoder_scorer_agrees_with_the_single_model_evaluator(tmp_path: Path) -> None:
    kg = paired_kg()
    table = {f"head {i}": one_hot(i, N) for i in range(N)}
    table |= {f"tail {i}": one_hot((i + i % 2) % N, N) for i in range(N)}  # some tails off-axis
    head = RelationHead(["r"], N)
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        head.weight.copy_(torch.randn(head.weight.shape, generator=generator))
    head.save(tmp_path)
    encoder = FakeEncoder(table, path=tmp_path)
    single = LinkPredictionEvaluator(kg, triplets=kg.relations).evaluate(encoder)
    compared = compare_link_prediction(kg, {"e": EncoderTailScorer(encoder, kg)}, kg.relations)
    for key in ("hits@1", "hits@3", "mr", "mrr"):
        assert compared.metrics["e"][key] == pytest.approx(single[key])


def test_nothing_to_rank_and_no_relation_head_are_errors(tmp_path: Path) -> None:
    kg = paired_kg()
    with pytest.raises(EmptyResultError, match="give at least one"):
        compare_link_prediction(kg, {}, kg.relations)
    nobody = TableScorer({}, {"H0"})
    with pytest.raises(EmptyResultError, match="can be ranked by every model"):
        compare_link_prediction(kg, {"s": nobody}, kg.relations)
    with pytest.raises(ArtifactMismatchError, match="no relation head"):
        EncoderTailScorer(FakeEncoder({"x": [1.0]}, path=tmp_path), kg)


def test_cli_ranks_kges_and_a_relation_head_on_the_heldout_edges(
    tmp_path: Path, tiny_bert_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("pykeen")
    from termnorm.kg.split import HELDOUT_FILE
    from termnorm.kge import KGETailScorer, load_kge

    full = save_cluster_kg(tmp_path / "kg")
    train = tmp_path / "train"
    split = ["kg", "split", str(full), "--out", str(train), "--test-fraction", "0.1"]
    code, out, err = run_main(split, capsys)
    assert code == 0, err
    kges = []
    for kind in ("transe", "rotate"):
        kges.append(tmp_path / kind)
        args = ["kge", "train", "--kg", str(train), "--model", kind, "--out", str(kges[-1])]
        args += ["--dim", "8", "--epochs", "2", "--batch-size", "64", "--no-mcsm"]
        code, out, err = run_main(args, capsys)
        assert code == 0, err
    # the rebuilt PyKEEN model holds the saved parameters
    transe = KGETailScorer(kges[0], KnowledgeGraph.load(train))
    saved = load_kge(kges[0])
    rebuilt = transe.model.entity_representations[0](indices=None).detach().numpy()
    np.testing.assert_allclose(rebuilt, saved.vectors, atol=1e-6)
    model = tmp_path / "model"
    shutil.copytree(tiny_bert_path, model)
    RelationHead(["associated_with", "is_a"], 32).save(model)
    args = ["eval", "linkpred", "--kg", str(train), "--triplets", str(train / HELDOUT_FILE)]
    args += ["--kge", str(kges[0]), "--kge", str(kges[1]), "--model", str(model), "--json"]
    code, out, err = run_main(args, capsys)
    assert code == 0, err
    result = json.loads(out)
    heldout = pd.read_parquet(train / HELDOUT_FILE)
    assert result["triplets"] + result["dropped"] == len(heldout.drop_duplicates())
    assert result["triplets"] > 0 and len(result["models"]) == 3
    for metrics in result["models"].values():
        assert 0.0 <= metrics["hits@1"] <= metrics["hits@10"] <= 1.0
        assert 1.0 <= metrics["mr"] <= result["candidates"]
    code, out, err = run_main(args[:-1], capsys)  # the table
    assert code == 0 and "KGE" in out and "relation head" not in err
    code, out, err = run_main(["eval", "linkpred", "--kg", str(train)], capsys)
    assert code != 0 and "--model and/or --kge" in out + err
