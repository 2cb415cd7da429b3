"""``--loss ms-v3 --kge`` and ``--loss ms-v2``: KGE train → MS v3 train end to end, the refusals,
the v3 objective's margins by hand, the fallback for concepts without an entity vector."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import torch

from _cli import TINY_TRAIN_ARGS, run_main
from _kge_fixtures import save_cluster_kg
from termnorm.errors import ArtifactMismatchError
from termnorm.kg import KnowledgeGraph
from termnorm.kge import KGEVectors
from termnorm.losses import (
    MultiSimilarityLoss,
    MultiSimilarityV2Loss,
    MultiSimilarityV3Loss,
    label_pairs,
    multi_similarity_with_margins,
)
from termnorm.training import KGEMarginObjective, TrainConfig, build_trainer
from termnorm.training.sampler import Batch


@pytest.fixture(scope="module")
def kg_and_kge(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The 36-concept cluster KG (the 10-concept tiny KG has too few relations for the KGE
    split) and a tiny TransE trained on it by ``termnorm kge train``."""
    pytest.importorskip("pykeen")
    from termnorm.cli.main import main

    root = tmp_path_factory.mktemp("kge_margin")
    kg_dir = save_cluster_kg(root / "kg")
    args = ["kge", "train", "--kg", str(kg_dir), "--model", "transe", "--dim", "8"]
    args += ["--epochs", "2", "--batch-size", "64", "--out", str(root / "kge")]
    with pytest.raises(SystemExit) as done:
        main(args)
    assert done.value.code in (0, None)
    return kg_dir, root / "kge"


def test_kge_train_then_ms_v3_train_end_to_end(
    kg_and_kge: tuple[Path, Path],
    tiny_bert_path: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    kg_dir, kge_dir = kg_and_kge
    out = tmp_path / "model"
    args = ["train", "--kg", str(kg_dir), "--loss", "ms-v3", "--kge", str(kge_dir)]
    args += ["--base-model", str(tiny_bert_path), "--out", str(out), "--steps", "3"]
    args += ["--warmup", "1", "--hard-refresh", "2", "--log-every", "1", *TINY_TRAIN_ARGS]
    code, _, err = run_main(args, capsys)
    assert code == 0, err
    records = [json.loads(line) for line in (out / "train_log.jsonl").read_text().splitlines()]
    losses = [r["loss"] for r in records if "loss" in r]
    assert len(losses) == 3 and all(math.isfinite(v) for v in losses)
    config = json.loads((out / "training_config.json").read_text())
    assert (config["loss"], config["kge"]) == ("ms-v3", str(kge_dir))
    objective = json.loads((out / "objective.json").read_text())
    assert objective["kge"] == str(kge_dir) and objective["kge_model"] == "transe"
    assert objective["kge_kg_fingerprint"] == KnowledgeGraph.load(kg_dir).fingerprint
    # every cluster concept has a relation, so a vector: no pair falls back to v1's margin
    assert objective["concepts_without_kge_vector"] == 0
    assert objective["pairs_with_fallback_margin"] == 0
    assert objective["pairs_with_kge_margin"] == 3 * 16 * 15  # 3 steps × 2k(2k − 1), k = 8
    card = (out / "README.md").read_text()
    assert "## Objective" in card and "| kge_model | `transe` |" in card


def test_ms_v3_without_kge_and_kge_without_ms_v3_are_refused(
    kg_and_kge: tuple[Path, Path], tmp_path: Path
) -> None:
    kg_dir, kge_dir = kg_and_kge
    with pytest.raises(ValueError, match=r"--loss ms-v3 needs --kge KGE.*termnorm kge train"):
        TrainConfig(kg=kg_dir, out=tmp_path / "m", loss="ms-v3").validate()  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"--kge is only used by --loss ms-v3 \(got --loss ms\)"):
        TrainConfig(kg=kg_dir, out=tmp_path / "m", loss="ms", kge=kge_dir).validate()  # type: ignore[arg-type]


def test_a_kge_of_another_kg_is_refused_naming_its_kg(
    kg_and_kge: tuple[Path, Path], tiny_bert_path: Path, tmp_path: Path
) -> None:
    kg_dir, kge_dir = kg_and_kge
    other = save_cluster_kg(tmp_path / "other_kg", seed=1)  # other random edges
    trained_on = KnowledgeGraph.load(kg_dir).fingerprint
    config = TrainConfig(
        kg=other,
        out=tmp_path / "m",
        loss="ms-v3",  # type: ignore[arg-type]
        kge=kge_dir,
        base_model=tiny_bert_path,
        k=8,
        device="cpu",
    )
    with pytest.raises(
        ArtifactMismatchError, match=f"trained on the KG with fingerprint {trained_on}"
    ):
        build_trainer(config)
    assert not (tmp_path / "m").exists()


def _hand_made_objective() -> KGEMarginObjective:
    # A, B orthogonal; C halfway (cos 1/√2 with both); D has no entity vector
    kge = KGEVectors(
        concept_ids=["A", "B", "C"],
        vectors=np.array([[2.0, 0.0], [0.0, 3.0], [1.0, 1.0]], dtype=np.float32),
        relation_labels=["r"],
        relation_vectors=np.zeros((1, 2), dtype=np.float32),
    )
    return KGEMarginObjective(["A", "B", "C", "D"], kge)


def _batch(labels: list[int]) -> Batch:
    return Batch(
        terms=[f"t{i}" for i in range(len(labels))],
        labels=torch.tensor(labels),
        rel_idx=torch.full((len(labels) // 2,), -1),
        corrupted=torch.zeros(len(labels) // 2, dtype=torch.long),
    )


def test_v3_objective_margins_equal_the_hand_computed_ones() -> None:
    objective = _hand_made_objective()
    assert objective.concepts_without_vector == 1
    batch = _batch([0, 0, 1, 2, 3, 3])  # A, A, B, C, D, D
    e = torch.tensor([[1, 0], [1, 0], [0, 1], [1, 0], [0, 1], [1, 1]], dtype=torch.float32)
    lam_pos, lam_neg = objective.margins(e, batch)
    r = 1 / math.sqrt(2)
    # S (cosines of e) and S^KGE (A·A = 1, A·B = 0, A·C = B·C = r); D: fallback 0.5 on both
    s = torch.tensor(
        [
            [1, 1, 0, 1, 0, r],
            [1, 1, 0, 1, 0, r],
            [0, 0, 1, 0, 1, r],
            [1, 1, 0, 1, 0, r],
            [0, 0, 1, 0, 1, r],
            [r, r, r, r, r, 1],
        ]
    )
    s_kge = torch.tensor(
        [[1, 1, 0, r], [1, 1, 0, r], [0, 0, 1, r], [r, r, r, 1]]
    )  # rows/cols: A, A, B, C
    gap = (s[:4, :4] - s_kge).abs()
    expected_pos = torch.full((6, 6), 0.5)
    expected_neg = torch.full((6, 6), 0.5)
    expected_pos[:4, :4] = gap
    expected_neg[:4, :4] = 1 - gap
    torch.testing.assert_close(lam_pos, expected_pos)
    torch.testing.assert_close(lam_neg, expected_neg)
    # spot checks: A–A identical (λ_p 0), A–B orthogonal in both (λ_n 1), A–C 1 vs r
    assert lam_pos[0, 1] == 0 and lam_neg[0, 2] == 1
    assert math.isclose(float(lam_neg[0, 3]), r, rel_tol=1e-6)


def test_v3_objective_loss_uses_those_margins_and_counts_the_fallback_pairs(
    tmp_path: Path,
) -> None:
    objective = _hand_made_objective()
    batch = _batch([0, 0, 1, 2, 3, 3])
    e = torch.randn(6, 4, generator=torch.Generator().manual_seed(0))
    parts = objective(e, batch)
    lam_pos, lam_neg = objective.margins(e, batch)
    sim, pos, neg = label_pairs(e, batch.labels)
    expected = multi_similarity_with_margins(sim, pos, neg, lam_pos, lam_neg)
    torch.testing.assert_close(parts["loss"], expected)
    torch.testing.assert_close(parts["ms"], parts["loss"])
    # 6 items, 30 ordered pairs; the 2 D's pair with everything: 2·5 + 4·2 = 18 fall back
    assert objective.pairs == {"kge": 12, "fallback": 18}
    objective.save(tmp_path)
    record = json.loads((tmp_path / "objective.json").read_text())
    assert record["pairs_with_fallback_margin"] == 18 and record["fallback_margin"] == 0.5


def test_v3_loss_with_no_known_pair_is_v1() -> None:
    e = torch.randn(12, 6, generator=torch.Generator().manual_seed(1))
    labels = torch.arange(4).repeat_interleave(3)
    unknown = torch.zeros(12, 12, dtype=torch.bool)
    v3 = MultiSimilarityV3Loss()(e, labels, torch.rand(12, 12), unknown)
    torch.testing.assert_close(v3, MultiSimilarityLoss()(e, labels))


def test_ms_v2_trains_with_its_margins(
    tiny_bert_path: Path, tiny_kg: KnowledgeGraph, tmp_path: Path
) -> None:
    config = TrainConfig.from_dict(
        dict(
            base_model=tiny_bert_path,
            out=tmp_path / "model",
            loss="ms-v2",
            ms_lam_pos=0.9,
            steps=3,
            k=8,
            warmup=1,
            max_length=16,
            device="cpu",
            precision="fp32",
            hard_refresh=2,
            log_every=1,
            freeze_embeddings=False,
            freeze_layers=0,
        )
    )
    trainer = build_trainer(config, kg=tiny_kg)
    ms = trainer.objective.ms  # type: ignore[union-attr]
    assert isinstance(ms, MultiSimilarityV2Loss) and (ms.lam_pos, ms.lam_neg) == (0.9, 0.5)
    assert trainer.objective.relation is None  # type: ignore[union-attr]
    result = trainer.train()
    assert result.steps == 3
    record = json.loads((tmp_path / "model" / "train_log.jsonl").read_text().splitlines()[-1])
    assert math.isfinite(record["loss"]) and "rel" not in record
    saved = json.loads((tmp_path / "model" / "training_config.json").read_text())
    assert (saved["loss"], saved["ms_lam_pos"], saved["ms_lam_neg"]) == ("ms-v2", 0.9, 0.5)
