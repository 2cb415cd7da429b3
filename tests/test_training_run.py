"""End-to-end training on the tiny BERT + tiny KG: loss goes down, output folder, resume."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np
import pytest
import torch

from termnorm.encoders import TermEncoder
from termnorm.errors import ArtifactMismatchError
from termnorm.kg import KnowledgeGraph
from termnorm.losses import RelationHead
from termnorm.training import KGSampler, LossKind, TrainConfig, Trainer
from termnorm.training.checkpoint import latest_checkpoint


def _config(base: Path, out: Path, **kw: object) -> TrainConfig:
    defaults: dict[str, object] = dict(
        base_model=base,
        out=out,
        steps=12,
        k=16,
        m=2,
        lr=2e-3,
        warmup=2,
        max_length=16,
        device="cpu",
        precision="fp32",
        hard_refresh=4,
        log_every=1,
        checkpoint_every=0,
        seed=3,
        freeze_embeddings=False,  # the tiny BERT has 2 layers: train them all
        freeze_layers=0,
        synonym_share=0.5,
        loss="coder",
    )
    defaults.update(kw)
    return TrainConfig.from_dict(defaults)


def _ms_loss_on_fixed_batches(model_dir: Path, kg: KnowledgeGraph) -> float:
    from termnorm.losses import MultiSimilarityLoss

    encoder = TermEncoder.load(model_dir, device="cpu", max_length=16)
    sampler = KGSampler(kg, k=16, m=2, synonym_share=1.0, seed=99)
    loss = MultiSimilarityLoss(mine=False)
    values = []
    with torch.no_grad():
        for step in range(4):
            b = sampler.batch(step)
            values.append(float(loss(torch.from_numpy(encoder.encode(b.terms)), b.labels)))
    return float(np.mean(values))


def test_training_lowers_the_loss_and_writes_a_sentence_transformers_folder(
    tiny_bert_path: Path, tiny_kg: KnowledgeGraph, tmp_path: Path
) -> None:
    out = tmp_path / "model"
    result = Trainer(_config(tiny_bert_path, out, steps=30), kg=tiny_kg).train()
    assert not result.interrupted and result.steps == 30
    before = _ms_loss_on_fixed_batches(tiny_bert_path, tiny_kg)
    after = _ms_loss_on_fixed_batches(out, tiny_kg)
    assert after < before
    for name in ("modules.json", "README.md", "train_log.jsonl", "training_config.json"):
        assert (out / name).is_file()
    assert not (out / "checkpoints").exists()
    records = [json.loads(x) for x in (out / "train_log.jsonl").read_text().splitlines()]
    assert [r["step"] for r in records] == list(range(1, 31))
    assert {"loss", "ms", "rel", "terms_per_s", "rss_mb"} <= set(records[0])
    # SentenceTransformer loads it and agrees with TermEncoder.encode
    from sentence_transformers import SentenceTransformer

    # trained at 16 tokens; the long text needs ~28 and must not be cut at 16 by either
    texts = ["heart attack", "asthma", "甲状腺肿物切除术", " ".join(["severe"] * 25) + " asthma"]
    st = SentenceTransformer(str(out), device="cpu").encode(texts, convert_to_numpy=True)
    ours = TermEncoder.load(out, device="cpu").encode(texts)
    np.testing.assert_allclose(st, ours, atol=1e-5)
    head = RelationHead.load(out)
    assert head.labels == ["isa", "risk_factor_of"]
    assert not torch.equal(head.weight[0], torch.eye(head.dim))  # trained


def test_output_folder_builds_an_index_with_the_cli(
    tiny_bert_path: Path, tiny_kg: KnowledgeGraph, tiny_kg_dir: Path, tmp_path: Path
) -> None:
    from termnorm.cli.main import main
    from termnorm.index import TermIndex

    out = tmp_path / "model"
    Trainer(_config(tiny_bert_path, out, steps=2, loss="ms"), kg=tiny_kg).train()
    assert not (out / "relations").exists()  # synonym-only: no relation head
    index_dir = tmp_path / "index"
    args = ["index", "build", "--kg", str(tiny_kg_dir), "--model", str(out), "--out"]
    with pytest.raises(SystemExit) as done:
        main([*args, str(index_dir)])
    assert done.value.code in (0, None)
    index = TermIndex.load(index_dir)
    assert index.term_vectors.shape == (len(tiny_kg.terms), 32)


@pytest.mark.parametrize("loss", [k.value for k in LossKind if k is not LossKind.TRIPLET])
def test_every_objective_trains(
    tiny_bert_path: Path, tiny_kg: KnowledgeGraph, tmp_path: Path, loss: str
) -> None:
    out = tmp_path / "model"
    Trainer(_config(tiny_bert_path, out, steps=3, loss=loss), kg=tiny_kg).train()
    record = json.loads((out / "train_log.jsonl").read_text().splitlines()[-1])
    assert np.isfinite(record["loss"])
    assert ("rel" in record) == (loss not in {"ms", "ms+sty"})
    assert ("sty" in record) == loss.endswith("+sty")


def _params(folder: Path) -> dict[str, torch.Tensor]:
    from safetensors.torch import load_file

    return load_file(str(folder / "model.safetensors"))


class _StopAt(Trainer):
    """Pretends a signal arrived after step ``stop_at``."""

    stop_at = 0

    def _step(self, step: int) -> dict[str, float]:
        parts = super()._step(step)
        if step + 1 == self.stop_at:
            self.stop.signal = 15
        return parts


def test_resume_gives_the_same_parameters_as_an_uninterrupted_run(
    tiny_bert_path: Path, tiny_kg: KnowledgeGraph, tmp_path: Path
) -> None:
    full = tmp_path / "full"
    Trainer(_config(tiny_bert_path, full, loss="coder+sty"), kg=tiny_kg).train()
    cut = tmp_path / "cut"
    stopper = _StopAt(_config(tiny_bert_path, cut, loss="coder+sty"), kg=tiny_kg)
    stopper.stop_at = 6  # between two neighbour refreshes (every 4 steps)
    first = stopper.train()
    assert first.interrupted and first.steps == 6 and first.signal == 15
    assert latest_checkpoint(cut) is not None and not (cut / "model.safetensors").exists()
    second = Trainer(_config(tiny_bert_path, cut, loss="coder+sty"), kg=tiny_kg).train(True)
    assert second.steps == 12 and not second.interrupted
    a, b = _params(full), _params(cut)
    assert a.keys() == b.keys()
    for name in a:
        torch.testing.assert_close(a[name], b[name], rtol=0, atol=0)
    torch.testing.assert_close(RelationHead.load(full).weight, RelationHead.load(cut).weight)
    log = [json.loads(x) for x in (cut / "train_log.jsonl").read_text().splitlines()]
    assert [r["step"] for r in log] == list(range(1, 13))
    elapsed = [r["elapsed_s"] for r in log]  # wall time carries over the resume
    assert elapsed == sorted(elapsed)
    # --resume on a finished folder (checkpoints cleaned) refuses instead of retraining
    with pytest.raises(ArtifactMismatchError, match=r"holds no checkpoint.*--overwrite"):
        Trainer(_config(tiny_bert_path, cut, loss="coder+sty"), kg=tiny_kg).train(True)
    assert (cut / "model.safetensors").is_file()


def test_logged_lr_is_the_rate_each_step_used(
    tiny_bert_path: Path, tiny_kg: KnowledgeGraph, tmp_path: Path
) -> None:
    out = tmp_path / "m"
    Trainer(_config(tiny_bert_path, out, loss="ms", hard_negatives=False), kg=tiny_kg).train()
    lrs = [json.loads(x)["lr"] for x in (out / "train_log.jsonl").read_text().splitlines()]
    # warm-up 2 of 12 steps: (s+1)/2 for s < 2, then (12 - s)/10, at step index s = 0..11
    expected = [2e-3 * f for f in (0.5, 1.0, *[(12 - s) / 10 for s in range(2, 12)])]
    assert lrs == pytest.approx(expected)


def test_a_signal_during_the_final_evaluation_checkpoints_the_last_step(
    tiny_bert_path: Path, tiny_kg: KnowledgeGraph, tmp_path: Path
) -> None:
    out = tmp_path / "m"
    cfg = _config(tiny_bert_path, out, steps=4, loss="ms", hard_negatives=False)
    holder: list[Trainer] = []

    def evaluator(encoder: TermEncoder) -> dict[str, float]:
        holder[0].stop.signal = 15  # SIGTERM arrives while the final evaluation runs
        return {"dev_acc@1": 0.5}

    trainer = Trainer(cfg, kg=tiny_kg, evaluator=evaluator)
    holder.append(trainer)
    first = trainer.train()
    assert first.interrupted and first.steps == 4
    assert latest_checkpoint(out) is not None and not (out / "model.safetensors").exists()
    second = Trainer(cfg, kg=tiny_kg, evaluator=lambda e: {"dev_acc@1": 0.5}).train(True)
    assert second.steps == 4 and not second.interrupted
    assert (out / "model.safetensors").is_file()


def test_kg_without_relations_trains_synonym_only_with_a_warning(
    tiny_bert_path: Path, tiny_kg: KnowledgeGraph, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    bare = KnowledgeGraph.from_records(tiny_kg.concepts, tiny_kg.terms, None)
    with caplog.at_level(logging.WARNING):
        Trainer(_config(tiny_bert_path, tmp_path / "m", steps=2), kg=bare).train()
    assert "no usable relation" in caplog.text and "training synonym-only" in caplog.text
    assert not (tmp_path / "m" / "relations").exists()


def test_dev_evaluation_keeps_the_best_model(
    tiny_bert_path: Path, tiny_kg: KnowledgeGraph, tmp_path: Path
) -> None:
    scores = iter([0.2, 0.9, 0.5, 0.4])
    seen: list[int] = []

    def evaluator(encoder: TermEncoder) -> dict[str, float]:
        seen.append(1)
        return {"dev_acc@1": next(scores)}

    out = tmp_path / "m"
    cfg = _config(tiny_bert_path, out, steps=8, eval_every=2)
    result = Trainer(cfg, kg=tiny_kg, evaluator=evaluator).train()
    assert len(seen) == 4 and result.best is not None
    assert result.best["step"] == 4 and result.best["score"] == 0.9
    assert "Best at step 4" in (out / "README.md").read_text()


def test_bad_settings_and_existing_output_fail_fast(
    tiny_bert_path: Path, tiny_kg: KnowledgeGraph, tmp_path: Path
) -> None:
    with pytest.raises(ValueError, match=r"--m must satisfy 2 <= m <= sqrt\(k\)"):
        Trainer(_config(tiny_bert_path, tmp_path / "x", k=16, m=5), kg=tiny_kg)
    with pytest.raises(ValueError, match="--k must be at least 4"):
        Trainer(_config(tiny_bert_path, tmp_path / "x", k=2, m=2), kg=tiny_kg)
    for bad, message in (
        ({"hard_refresh": 0}, "--hard-refresh"),
        ({"log_every": 0}, "--log-every must be at least 1"),
        ({"warmup": 20}, r"--warmup 20 means 20 warm-up steps, outside \[0, --steps 12\]"),
        ({"checkpoint_every": -1}, "--checkpoint-every must be >= 0"),
    ):
        with pytest.raises(ValueError, match=message):
            Trainer(_config(tiny_bert_path, tmp_path / "x", **bad), kg=tiny_kg)
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "file").write_text("x")
    with pytest.raises(ArtifactMismatchError, match=r"--resume .* --overwrite"):
        Trainer(_config(tiny_bert_path, tmp_path / "busy"), kg=tiny_kg).train()
