"""End to end on a fixture KG: PyKEEN training → KGE folder → load → similarity → MS v3 loss;
the ``termnorm kge`` commands; the missing-extra error."""

from __future__ import annotations

import json
import logging
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch

from _cli import run_main
from _kge_fixtures import make_tree_kg, save_cluster_kg
from termnorm.errors import ArtifactMismatchError, MissingExtraError
from termnorm.kg import KnowledgeGraph
from termnorm.kge import KGEConfig, KGEModelKind, kg_triples, load_kge, train_kge
from termnorm.kge.split import KEEPING_ENDS
from termnorm.losses import MultiSimilarityV3Loss

pytest.importorskip("pykeen")

TINY = {"dim": 8, "epochs": 3, "batch_size": 64, "eval_batch_size": 16}


@pytest.fixture()
def cluster_kg_dir(tmp_path: Path) -> Path:
    return save_cluster_kg(tmp_path / "kg")


@pytest.mark.parametrize("model", list(KGEModelKind))
def test_train_save_load_and_use_in_ms_v3(
    model: KGEModelKind, cluster_kg_dir: Path, tmp_path: Path
) -> None:
    kg = KnowledgeGraph.load(cluster_kg_dir)
    trained = train_kge(cluster_kg_dir, KGEConfig(model=model, **TINY), tmp_path / "kge")
    kge = load_kge(tmp_path / "kge", kg)
    np.testing.assert_array_equal(kge.vectors, trained.vectors)
    width = 8 if model is KGEModelKind.TRANSE else 16  # complex [Re; Im], SimplE [h; t]
    assert kge.vectors.shape == (36, width)
    assert sorted(kge.concept_ids) == sorted(kg.concepts["concept_id"])
    assert sorted(kge.relation_labels) == ["associated_with", "is_a"]

    card = kge.card
    assert card["config"]["model"] == model.value
    assert card["kg"]["fingerprint"] == kg.fingerprint
    assert sum(card["split"]["sizes"].values()) == len(kg_triples(kg)[0])
    assert len(card["epoch_losses"]) == 3
    assert set(card["versions"]) == {"termnorm", "pykeen", "torch"}
    m = card["metrics"]
    assert 0.0 <= m["linkpred_hits@1"] <= m["linkpred_hits@3"] <= m["linkpred_hits@10"] <= 1.0
    assert 1.0 <= m["linkpred_mr"] <= 36 and 0.0 < m["linkpred_mrr"] <= 1.0

    ids = list(kg.concepts["concept_id"])
    sim = kge.similarity(ids, ids)
    assert sim.shape == (36, 36)
    assert sim.min() >= -1.0 and sim.max() <= 1.0
    np.testing.assert_allclose(np.diag(sim), 1.0, atol=1e-5)

    # a batch of 4 concepts × 3 terms: the MS v3 loss with margins from the KGE
    batch_ids = [ids[i] for i in (0, 5, 13, 30) for _ in range(3)]
    labels = torch.tensor([i // 3 for i in range(12)])
    kge_sim = torch.from_numpy(kge.similarity(batch_ids, batch_ids))
    embeddings = torch.randn(12, 16, generator=torch.Generator().manual_seed(0))
    embeddings.requires_grad_(True)
    loss = MultiSimilarityV3Loss()(embeddings, labels, kge_sim)
    loss.backward()
    assert torch.isfinite(loss) and loss > 0
    assert embeddings.grad is not None and torch.isfinite(embeddings.grad).all()


def test_training_is_seeded_and_lowers_the_loss(cluster_kg_dir: Path, tmp_path: Path) -> None:
    config = KGEConfig(**{**TINY, "epochs": 12, "batch_size": 32})
    a = train_kge(cluster_kg_dir, config, tmp_path / "a")
    b = train_kge(cluster_kg_dir, config, tmp_path / "b")
    np.testing.assert_array_equal(a.vectors, b.vectors)
    losses = a.card["epoch_losses"]  # one negative per positive: noisy from epoch to epoch
    assert np.mean(losses[-3:]) < np.mean(losses[:3])


def test_a_sample_of_the_test_triples_is_ranked(cluster_kg_dir: Path, tmp_path: Path) -> None:
    kge = train_kge(cluster_kg_dir, KGEConfig(**TINY, eval_max_triples=4), tmp_path / "kge")
    assert kge.card["linkpred"]["ranked_test_triples"] == 4
    assert kge.card["linkpred"]["test_triples"] > 4


def test_an_unsaved_kg_is_refused(tmp_path: Path) -> None:
    kg = KnowledgeGraph.load(save_cluster_kg(tmp_path / "kg"))
    unsaved = KnowledgeGraph(kg.concepts, kg.terms, kg.relations)
    with pytest.raises(ArtifactMismatchError, match="save it with"):
        train_kge(unsaved, KGEConfig(**TINY), tmp_path / "kge")


def test_missing_pykeen_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, cluster_kg_dir: Path, tmp_path: Path
) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "pykeen" else real(name, *a)
    )
    with pytest.raises(MissingExtraError, match=r"pip install 'termnorm\[kge\]'"):
        train_kge(cluster_kg_dir, KGEConfig(**TINY), tmp_path / "kge")
    assert not (tmp_path / "kge").exists()


def test_cli_train_and_info(
    cluster_kg_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text(
        "cardio disorder 1\tcardio problem 2\t9\n"
        "cardio disorder 1\tlung disorder 3\t2\n"
        "skin problem 4\tskin disorder 5\t8\n"
        "lung problem 6\tskin disorder 7\t1\n"
        "no such term\tskin disorder 7\t1\n"
    )
    out = tmp_path / "kge"
    args = ["kge", "train", "--kg", str(cluster_kg_dir), "--model", "complex", "--out", str(out)]
    args += ["--dim", "8", "--epochs", "2", "--batch-size", "64", "--mcsm-k", "5"]
    code, stdout, stderr = run_main([*args, "--relatedness", f"toy={pairs}", "--json"], capsys)
    assert code == 0, stderr
    card = json.loads(stdout)
    assert card["config"]["model"] == "complex"
    metrics = card["metrics"]
    assert metrics["toy_coverage"] == pytest.approx(4 / 5)
    assert -1.0 <= metrics["toy_spearman"] <= 1.0
    assert 0.0 <= metrics["mcsm_mean"] <= metrics["mcsm_max"]
    assert {"mcsm_cardio", "mcsm_lung", "mcsm_skin"} <= set(metrics)

    code, stdout, _ = run_main(["kge", "info", str(out), "--json"], capsys)
    assert code == 0 and json.loads(stdout) == card

    unrelated = tmp_path / "unrelated.tsv"
    unrelated.write_text("no such term\tskin disorder 7\t1\nfever\tcough\t3\n")
    refused = [*args[:6], "--out", str(tmp_path / "refused"), "--relatedness", str(unrelated)]
    code, _, stderr = run_main(refused, capsys)
    assert code == 1 and "no pair of" in stderr and "drop --relatedness" in stderr
    assert not (tmp_path / "refused").exists()  # refused before training
    code, stdout, _ = run_main(["kge", "info", str(out)], capsys)
    assert code == 0 and "linkpred_mrr" in stdout and "toy_spearman" in stdout
    sizes = card["split"]["sizes"]
    assert f"{sizes['train']} / {sizes['valid']} / {sizes['test']}" in stdout


def test_cli_refuses_a_kg_too_small_for_the_split(
    tiny_kg_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["kge", "train", "--kg", str(tiny_kg_dir), "--out", str(tmp_path / "kge")]
    code, _, stderr = run_main(args, capsys)
    assert code == 1 and "too few for a split" in stderr


def test_cli_trains_on_a_plain_tree_and_reports_the_edges_kept_in_training(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kg = make_tree_kg().save(tmp_path / "kg", card={"sources": [{"format": "fixture"}]})
    out = tmp_path / "kge"
    args = ["kge", "train", "--kg", str(kg), "--out", str(out), "--no-mcsm", "--json"]
    code, stdout, stderr = run_main([*args, "--dim", "8", "--epochs", "1"], capsys)
    assert code == 0, stderr
    split = json.loads(stdout)["split"]
    assert split["kept_in_training"] == 124 and split["method"] == KEEPING_ENDS
    assert split["sizes"] == {"train": 124, "valid": 4, "test": 8}
    code, stdout, _ = run_main(["kge", "info", str(out)], capsys)
    assert code == 0 and "kept in training" in stdout and "124 triples" in stdout


def test_training_and_scoring_show_no_pykeen_notices(
    cluster_kg_dir: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A CPU run logs no warning of PyKEEN or torch_max_mem ("Reconstructing all label-based
    triples", "No cuda devices", "not considered safe", "Using automatic batch size") and raises no warning a user sees
    (PyKEEN's internal DeprecationWarning is hidden outside __main__ anyway)."""
    from termnorm.kge.scoring import KGETailScorer

    caplog.set_level(logging.WARNING)
    with warnings.catch_warnings(record=True) as raised:
        warnings.simplefilter("always")
        # a validation check every epoch: PyKEEN warned from the second check on
        train_kge(cluster_kg_dir, KGEConfig(**TINY, eval_every=1), tmp_path / "kge")
        KGETailScorer(tmp_path / "kge", KnowledgeGraph.load(cluster_kg_dir))
    shown = [f"{r.name}: {r.getMessage()}" for r in caplog.records]
    assert shown == []
    assert [str(w.message) for w in raised if w.category is not DeprecationWarning] == []


def test_a_1n_complex_scores_with_its_forward_relation_rows(
    cluster_kg_dir: Path, tmp_path: Path
) -> None:
    """ComplEx trains 1-N with a reciprocal relation per relation (PyKEEN rows 2r and 2r + 1):
    the saved relation vectors and the tail scorer must both use the forward row 2r, so the
    scorer equals Re⟨h, r, t̄⟩ computed from the saved vectors."""
    from termnorm.kge.scoring import KGETailScorer

    kge = train_kge(
        cluster_kg_dir, KGEConfig(**{**TINY, "model": KGEModelKind.COMPLEX}), tmp_path / "kge"
    )
    assert kge.card["training"]["reciprocal_relations"]
    assert kge.relation_vectors.shape[0] == len(kge.relation_labels) == 2
    scorer = KGETailScorer(tmp_path / "kge", KnowledgeGraph.load(cluster_kg_dir))
    heads = kge.concept_ids[:3]
    candidates = kge.concept_ids[:10]
    for r, relation in enumerate(kge.relation_labels):
        got = scorer.score_tails(heads, [relation] * 3, candidates)
        d = kge.vectors.shape[1] // 2
        row = {c: i for i, c in enumerate(kge.concept_ids)}
        h = kge.vectors[[row[c] for c in heads]]
        t = kge.vectors[[row[c] for c in candidates]]
        rel = kge.relation_vectors[r]
        a, b, c, e = h[:, :d], h[:, d:], rel[:d], rel[d:]
        x, y = a * c - b * e, a * e + b * c  # h · r, real and imaginary parts
        want = x @ t[:, :d].T + y @ t[:, d:].T  # Re⟨h · r, conj(t)⟩
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
