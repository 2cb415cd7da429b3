"""End-to-end training on the tiny BERT + tiny KG: loss goes down, output folder, resume,
keep-best by the evaluator's primary metric, one Trainer for every composition."""

from __future__ import annotations

import json
import logging
import os
import signal
from pathlib import Path

import numpy as np
import pytest
import torch

from termnorm.encoders import TermEncoder
from termnorm.errors import ArtifactMismatchError
from termnorm.kg import KnowledgeGraph
from termnorm.losses import RelationHead
from termnorm.training import (
    KGSampler,
    LossKind,
    TrainConfig,
    Trainer,
    build_trainer,
    coder_trainer,
    triplet_trainer,
)
from termnorm.training.checkpoint import latest_checkpoint
from termnorm.training.protocols import BatchSource, Encode
from termnorm.training.sampler import Batch


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
    result = build_trainer(_config(tiny_bert_path, out, steps=30), kg=tiny_kg).train()
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
    build_trainer(_config(tiny_bert_path, out, steps=2, loss="ms"), kg=tiny_kg).train()
    assert not (out / "relations").exists()  # synonym-only: no relation head
    index_dir = tmp_path / "index"
    args = ["index", "build", "--kg", str(tiny_kg_dir), "--model", str(out), "--out"]
    with pytest.raises(SystemExit) as done:
        main([*args, str(index_dir)])
    assert done.value.code in (0, None)
    index = TermIndex.load(index_dir)
    assert index.term_vectors.shape == (len(tiny_kg.terms), 32)


@pytest.mark.parametrize(
    "loss",
    # ms-v3 and kge-inject need a KGE (tests/test_training_kge_margin.py, _kge_injection.py),
    # mtcg training mentions (tests/test_mtcg_training.py), distill a parallel KG
    # (tests/test_distill.py)
    [
        k.value
        for k in LossKind
        if k
        not in (
            LossKind.TRIPLET,
            LossKind.MS_V3,
            LossKind.KGE_INJECT,
            LossKind.MTCG,
            LossKind.DISTILL,
        )
    ],
)
def test_every_objective_trains(
    tiny_bert_path: Path, tiny_kg: KnowledgeGraph, tmp_path: Path, loss: str
) -> None:
    out = tmp_path / "model"
    build_trainer(_config(tiny_bert_path, out, steps=3, loss=loss), kg=tiny_kg).train()
    record = json.loads((out / "train_log.jsonl").read_text().splitlines()[-1])
    assert np.isfinite(record["loss"])
    assert ("rel" in record) == (loss not in {"ms", "ms+sty", "ms-v2"})
    assert ("sty" in record) == loss.endswith("+sty")


def _params(folder: Path) -> dict[str, torch.Tensor]:
    from safetensors.torch import load_file

    return load_file(str(folder / "model.safetensors"))


class _SignalAfter:
    """A batch source that pretends SIGTERM arrived while step ``stop_at`` - 1 was drawn."""

    def __init__(self, source: BatchSource, stop_at: int) -> None:
        self.source, self.stop_at = source, stop_at
        self.trainer: Trainer | None = None

    def batch(self, step: int, shard: int = 0) -> Batch:
        if step + 1 == self.stop_at and self.trainer is not None:
            self.trainer.stop.signal = 15
        return self.source.batch(step, shard)

    def before_step(self, step: int, encode: Encode) -> None:
        self.source.before_step(step, encode)

    def state_dict(self) -> dict[str, object]:
        return self.source.state_dict()

    def load_state_dict(self, state: dict[str, object]) -> None:
        self.source.load_state_dict(state)

    def stats(self) -> dict[str, int]:
        return self.source.stats()


def test_resume_gives_the_same_parameters_as_an_uninterrupted_run(
    tiny_bert_path: Path, tiny_kg: KnowledgeGraph, tmp_path: Path
) -> None:
    full = tmp_path / "full"
    build_trainer(_config(tiny_bert_path, full, loss="coder+sty"), kg=tiny_kg).train()
    cut = tmp_path / "cut"
    stopper = build_trainer(_config(tiny_bert_path, cut, loss="coder+sty"), tiny_kg)
    signal = _SignalAfter(stopper.source, 6)  # between two neighbour refreshes (every 4 steps)
    signal.trainer, stopper.source = stopper, signal
    first = stopper.train()
    assert first.interrupted and first.steps == 6 and first.signal == 15
    assert latest_checkpoint(cut) is not None and not (cut / "model.safetensors").exists()
    second = build_trainer(_config(tiny_bert_path, cut, loss="coder+sty"), kg=tiny_kg).train(True)
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
        build_trainer(_config(tiny_bert_path, cut, loss="coder+sty"), kg=tiny_kg).train(True)
    assert (cut / "model.safetensors").is_file()


def test_sigterm_while_hard_negatives_encode_stops_at_the_next_batch(
    tiny_bert_path: Path, tiny_kg: KnowledgeGraph, tmp_path: Path
) -> None:
    out = tmp_path / "m"
    cfg = _config(tiny_bert_path, out, encode_batch=2)  # neighbour refreshes before steps 1, 5, 9
    trainer = build_trainer(cfg, tiny_kg)
    seen: dict[int, int] = {}  # step -> forward batches of its refresh
    refreshes_at = trainer.source.before_step
    forward = trainer.encoder._forward

    def before_step(step: int, encode: Encode) -> None:
        seen[step] = 0
        refreshes_at(step, encode)

    def counting(inputs: dict[str, np.ndarray]) -> np.ndarray:
        step = max(seen)
        seen[step] += 1
        if step == 4 and seen[step] == 2:
            os.kill(os.getpid(), signal.SIGTERM)  # the trainer's handler sets its flag
        return forward(inputs)

    trainer.source.before_step = before_step  # type: ignore[method-assign]
    trainer.encoder._forward = counting
    first = trainer.train()
    assert seen[0] > 2  # a whole refresh has more batches than the one cut short
    assert seen[4] == 2 and max(seen) == 4  # no batch after the signal, no step 5
    assert first.interrupted and first.steps == 4 and first.signal == signal.SIGTERM
    assert latest_checkpoint(out) is not None and not (out / "model.safetensors").exists()
    second = build_trainer(cfg, kg=tiny_kg).train(True)  # the refresh of step 4 runs again
    assert second.steps == 12 and not second.interrupted
    assert (out / "model.safetensors").is_file()


def test_logged_lr_is_the_rate_each_step_used(
    tiny_bert_path: Path, tiny_kg: KnowledgeGraph, tmp_path: Path
) -> None:
    out = tmp_path / "m"
    build_trainer(_config(tiny_bert_path, out, loss="ms", hard_negatives=False), kg=tiny_kg).train()
    lrs = [json.loads(x)["lr"] for x in (out / "train_log.jsonl").read_text().splitlines()]
    # warm-up 2 of 12 steps: (s+1)/2 for s < 2, then (12 - s)/10, at step index s = 0..11
    expected = [2e-3 * f for f in (0.5, 1.0, *[(12 - s) / 10 for s in range(2, 12)])]
    assert lrs == pytest.approx(expected)


class _Scripted:
    """An evaluator returning the next scripted metrics at each call."""

    def __init__(self, primary_metric: str, rows: list[dict[str, float]]) -> None:
        self.primary_metric = primary_metric
        self.rows = iter(rows)
        self.calls = 0
        self.snapshots: list[dict[str, torch.Tensor]] = []  # the weights seen at each call

    def __call__(self, encoder: TermEncoder) -> dict[str, float]:
        self.calls += 1
        self.snapshots.append({k: v.clone() for k, v in encoder.model.state_dict().items()})
        return next(self.rows)


def test_a_signal_during_the_final_evaluation_checkpoints_the_last_step(
    tiny_bert_path: Path, tiny_kg: KnowledgeGraph, tmp_path: Path
) -> None:
    out = tmp_path / "m"
    cfg = _config(tiny_bert_path, out, steps=4, loss="ms", hard_negatives=False)
    holder: list[Trainer] = []

    class SignalDuringEvaluation(_Scripted):
        def __call__(self, encoder: TermEncoder) -> dict[str, float]:
            holder[0].stop.signal = 15  # SIGTERM arrives while the final evaluation runs
            return super().__call__(encoder)

    evaluator = SignalDuringEvaluation("dev_acc@1", [{"dev_acc@1": 0.5}])
    trainer = build_trainer(cfg, tiny_kg, evaluator=evaluator)
    holder.append(trainer)
    first = trainer.train()
    assert first.interrupted and first.steps == 4
    assert latest_checkpoint(out) is not None and not (out / "model.safetensors").exists()
    again = _Scripted("dev_acc@1", [{"dev_acc@1": 0.5}])
    second = build_trainer(cfg, tiny_kg, evaluator=again).train(True)
    assert second.steps == 4 and not second.interrupted
    assert (out / "model.safetensors").is_file()


def test_kg_without_relations_trains_synonym_only_with_a_warning(
    tiny_bert_path: Path, tiny_kg: KnowledgeGraph, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    bare = KnowledgeGraph.from_records(tiny_kg.concepts, tiny_kg.terms, None)
    with caplog.at_level(logging.WARNING):
        build_trainer(_config(tiny_bert_path, tmp_path / "m", steps=2), kg=bare).train()
    assert "no usable relation" in caplog.text and "training synonym-only" in caplog.text
    assert not (tmp_path / "m" / "relations").exists()


def test_dev_evaluation_keeps_the_best_model(
    tiny_bert_path: Path, tiny_kg: KnowledgeGraph, tmp_path: Path
) -> None:
    evaluator = _Scripted("dev_acc@1", [{"dev_acc@1": x} for x in (0.2, 0.9, 0.5, 0.4)])
    out = tmp_path / "m"
    cfg = _config(tiny_bert_path, out, steps=8, eval_every=2)
    result = build_trainer(cfg, tiny_kg, evaluator=evaluator).train()
    assert evaluator.calls == 4 and result.best is not None
    assert result.best["step"] == 4 and result.best["score"] == 0.9
    assert "Best at step 4" in (out / "README.md").read_text()


def test_keep_best_follows_the_evaluators_primary_metric(
    tiny_bert_path: Path, tiny_kg: KnowledgeGraph, tmp_path: Path
) -> None:
    # acc@1 peaks at step 2, the evaluator's primary metric (MRR) at step 6
    rows = [
        {"dev_acc@1": 0.9, "dev_mrr": 0.1},
        {"dev_acc@1": 0.1, "dev_mrr": 0.2},
        {"dev_acc@1": 0.1, "dev_mrr": 0.8},
        {"dev_acc@1": 0.1, "dev_mrr": 0.3},
    ]
    out = tmp_path / "m"
    cfg = _config(tiny_bert_path, out, steps=8, eval_every=2, loss="ms", hard_negatives=False)
    evaluator = _Scripted("dev_mrr", rows)
    result = build_trainer(cfg, tiny_kg, evaluator=evaluator).train()
    assert result.best is not None and result.best["step"] == 6 and result.best["score"] == 0.8
    assert result.final_metrics == rows[-1]
    # the output holds the weights the evaluator saw at step 6, not the last ones
    saved, at_six = _params(out), evaluator.snapshots[2]
    name = "encoder.layer.1.output.dense.weight"
    torch.testing.assert_close(saved[name], at_six[name], rtol=0, atol=0)
    assert not torch.equal(saved[name], evaluator.snapshots[3][name])


def test_an_evaluator_needs_its_primary_metric(
    tiny_bert_path: Path, tiny_kg: KnowledgeGraph, tmp_path: Path
) -> None:
    cfg = _config(tiny_bert_path, tmp_path / "m", steps=2, loss="ms", hard_negatives=False)

    def no_primary(encoder: TermEncoder) -> dict[str, float]:
        return {"dev_acc@1": 1.0}

    with pytest.raises(TypeError, match="has no primary_metric"):
        build_trainer(cfg, tiny_kg, evaluator=no_primary)  # type: ignore[arg-type]
    wrong = _Scripted("dev_f1", [{"dev_acc@1": 1.0}])
    with pytest.raises(KeyError, match=r"'dev_f1' is not among its metrics \(dev_acc@1\)"):
        build_trainer(cfg, tiny_kg, evaluator=wrong).train()


def test_bad_settings_and_existing_output_fail_fast(
    tiny_bert_path: Path, tiny_kg: KnowledgeGraph, tmp_path: Path
) -> None:
    with pytest.raises(ValueError, match=r"--m must satisfy 2 <= m <= sqrt\(k\)"):
        build_trainer(_config(tiny_bert_path, tmp_path / "x", k=16, m=5), kg=tiny_kg)
    with pytest.raises(ValueError, match="--k must be at least 4"):
        build_trainer(_config(tiny_bert_path, tmp_path / "x", k=2, m=2), kg=tiny_kg)
    for bad, message in (
        ({"hard_refresh": 0}, "--hard-refresh"),
        ({"log_every": 0}, "--log-every must be at least 1"),
        ({"warmup": 20}, r"--warmup 20 means 20 warm-up steps, outside \[0, --steps 12\]"),
        ({"checkpoint_every": -1}, "--checkpoint-every must be at least 0"),
    ):
        with pytest.raises(ValueError, match=message):
            build_trainer(_config(tiny_bert_path, tmp_path / "x", **bad), kg=tiny_kg)
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "file").write_text("x")
    with pytest.raises(ArtifactMismatchError, match=r"--resume .* --overwrite"):
        build_trainer(_config(tiny_bert_path, tmp_path / "busy"), kg=tiny_kg).train()


def test_coder_and_triplet_are_compositions_of_one_trainer(
    tiny_bert_path: Path, tiny_kg: KnowledgeGraph, tmp_path: Path
) -> None:
    from termnorm.training import CoderObjective, TripletObjective, TripletSampler

    coder = coder_trainer(_config(tiny_bert_path, tmp_path / "c", steps=2), tiny_kg)
    cfg = _config(tiny_bert_path, tmp_path / "t", steps=2, loss="triplet", k=4)
    triplet = triplet_trainer(cfg, tiny_kg)
    assert type(coder) is Trainer and type(triplet) is Trainer
    assert isinstance(coder.source, KGSampler) and isinstance(coder.objective, CoderObjective)
    assert isinstance(triplet.source, TripletSampler)
    assert isinstance(triplet.objective, TripletObjective)
    for trainer, part in ((coder, "rel"), (triplet, "triplet")):
        result = trainer.train()
        assert result.steps == 2 and not result.interrupted
        record = json.loads((result.out / "train_log.jsonl").read_text().splitlines()[-1])
        assert part in record and np.isfinite(record["loss"])
    assert build_trainer(cfg, tiny_kg).objective.__class__ is TripletObjective


def test_resume_refuses_changed_settings_naming_them(
    tiny_bert_path: Path, tiny_kg_dir: Path, tmp_path: Path
) -> None:
    from conftest import make_tiny_kg

    out = tmp_path / "cut"
    stopper = build_trainer(_config(tiny_bert_path, out, loss="ms", kg=tiny_kg_dir))
    signal = _SignalAfter(stopper.source, 3)
    signal.trainer, stopper.source = stopper, signal
    assert stopper.train().interrupted
    other_kg = make_tiny_kg().save(tmp_path / "other_kg", card={"sources": []})
    changed = _config(tiny_bert_path, out, loss="ms", kg=other_kg, lr=1e-3)
    with pytest.raises(ArtifactMismatchError, match=r"other settings: .*kg .*lr") as err:
        build_trainer(changed).train(resume=True)
    assert "1e-3" in str(err.value) or "0.001" in str(err.value)
    assert "--overwrite" in str(err.value)
    # runtime settings may change; the same KG given by another spelling of its path is the same
    same = _config(tiny_bert_path, out, loss="ms", kg=tiny_kg_dir / ".." / "kg", log_every=5)
    result = build_trainer(same).train(resume=True)
    assert result.steps == 12 and not result.interrupted


def test_the_first_hard_negative_refresh_shows_its_progress(
    tiny_bert_path: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Before step 1 the sampler encodes one name per concept (76k for MEDIC + HPO): a bar
    says so instead of 'train 0/N' standing still."""
    from _kge_fixtures import make_cluster_kg
    from termnorm.training import trainer as trainer_module

    monkeypatch.setattr(trainer_module, "ENCODE_PROGRESS_MIN", 36)
    kg = make_cluster_kg()  # 36 concepts: more than the query cache takes in one call
    build_trainer(_config(tiny_bert_path, tmp_path / "m", steps=2, hard_refresh=4), kg=kg).train()
    err = capsys.readouterr().err
    assert "hard negatives: encoding 36 terms" in err
    assert err.index("hard negatives: encoding 36 terms") < err.index("2/2")
