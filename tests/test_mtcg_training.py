"""MTCG on the tiny BERT: the loss parts and labels, the implication head's save/load, the
batch layout, and ``termnorm train --objective mtcg`` end to end (a folder that loads as an
encoder, indexes, and predicts implication numbers)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from _cli import TINY_TRAIN_ARGS, run_main
from termnorm.encoders import TermEncoder
from termnorm.encoders.implication import (
    IMPLICATION_DIR,
    ImplicationHead,
    has_implication_head,
    load_implication_predictor,
)
from termnorm.errors import ArtifactMismatchError
from termnorm.kg import KnowledgeGraph
from termnorm.losses import (
    ImplicationLoss,
    MarginTripletLoss,
    balanced_class_weights,
    implication_labels,
)
from termnorm.training.config import LossKind, TrainConfig
from termnorm.training.data import training_mentions
from termnorm.training.mtcg import MtcgObjective, MtcgSource
from termnorm.training.mtcg_data import ConceptDictionary, build_mtcg_items
from termnorm.training.negatives import build_negatives

MENTIONS = [
    ("heart attacks", ("T:0001",)),
    ("high bp", ("T:0002",)),
    ("asthma and pneumonia", ("T:0004", "T:0006")),
    ("lung or heart or blood trouble", ("T:0009", "T:0008", "T:0007")),
    ("sugar", ("T:0003",)),
]


def test_implication_labels_and_loss() -> None:
    assert implication_labels(torch.tensor([1, 2, 3, 7])).tolist() == [0, 1, 2, 2]
    with pytest.raises(ValueError, match="at least one gold code"):
        implication_labels(torch.tensor([0]))
    logits = torch.tensor([[10.0, 0.0, 0.0], [0.0, 10.0, 0.0], [0.0, 0.0, 10.0]])
    assert ImplicationLoss()(logits, torch.tensor([1, 2, 5])).item() < 1e-3
    assert ImplicationLoss()(logits, torch.tensor([3, 3, 1])).item() > 5


def test_balanced_class_weights_formula() -> None:
    # 6 items: four 1-code, two 2-code, none >= 3: w_c = N / (C n_c) with C = 2 present
    weights = balanced_class_weights(torch.tensor([1, 1, 1, 1, 2, 2]))
    assert weights.tolist() == pytest.approx([6 / (2 * 4), 6 / (2 * 2), 0.0])
    with pytest.raises(ValueError, match="no training items"):
        balanced_class_weights(torch.tensor([], dtype=torch.long))


def test_weighted_implication_loss_is_the_weighted_mean() -> None:
    logits = torch.tensor([[2.0, 0.0, -1.0], [0.5, 1.5, 0.0], [0.0, 0.0, 0.0]])
    counts = torch.tensor([1, 2, 4])
    per_item = -torch.log_softmax(logits, dim=1)[torch.arange(3), torch.tensor([0, 1, 2])]
    w = torch.tensor([0.5, 2.0, 4.0])
    expected = (w * per_item).sum() / w.sum()
    assert ImplicationLoss(w)(logits, counts).item() == pytest.approx(expected.item(), rel=1e-6)
    # equal weights reduce to the paper's plain mean
    equal = ImplicationLoss(torch.ones(3))(logits, counts).item()
    assert equal == pytest.approx(ImplicationLoss()(logits, counts).item(), rel=1e-6)
    assert equal == pytest.approx(per_item.mean().item(), rel=1e-6)
    with pytest.raises(ValueError, match="shape"):
        ImplicationLoss(torch.ones(2))


def test_margin_triplet_loss_formula() -> None:
    m = torch.zeros(1, 2)
    p = torch.tensor([[1.0, 0.0]])  # d = 1
    n = torch.tensor([[[3.0, 0.0], [1.5, 0.0]]])  # d = 3 (no loss), 1.5 (1 + 1 - 1.5 = 0.5)
    assert MarginTripletLoss(1.0)(m, p, n).item() == pytest.approx(0.25)


def test_head_save_load_roundtrip(tmp_path: Path, tiny_encoder: TermEncoder) -> None:
    torch.manual_seed(0)
    head = ImplicationHead(32).eval()
    tiny_encoder.save(tmp_path / "m")
    with pytest.raises(ArtifactMismatchError, match="--objective mtcg"):
        load_implication_predictor(tmp_path / "m")
    assert not has_implication_head(tmp_path / "m")
    head.save(tmp_path / "m")
    loaded = ImplicationHead.load(tmp_path / "m")
    x = torch.randn(4, 32)
    assert torch.equal(head(x), loaded(x))
    predictor = load_implication_predictor(tmp_path / "m", device="cpu")
    pred = predictor.predict(["heart attack", "a and b", "x"])
    assert pred.dtype == np.int64 and set(pred.tolist()) <= {1, 2, 3}
    config = json.loads((tmp_path / "m" / IMPLICATION_DIR / "config.json").read_text())
    config["classes"] = [1, 2]
    (tmp_path / "m" / IMPLICATION_DIR / "config.json").write_text(json.dumps(config))
    with pytest.raises(ArtifactMismatchError, match="retrain"):
        ImplicationHead.load(tmp_path / "m")


def _source(kg: KnowledgeGraph, k: int = 2, batch: int = 3) -> MtcgSource:
    dictionary = ConceptDictionary.from_kg(kg)
    data = build_mtcg_items(dictionary, MENTIONS)
    strategy = build_negatives("random", kg, dictionary, data.items, k, seed=0)
    return MtcgSource(data, dictionary, strategy, batch, k, seed=0)


def test_batch_layout_and_objective(tiny_kg: KnowledgeGraph, tiny_encoder: TermEncoder) -> None:
    source = _source(tiny_kg)
    assert len(source.items) == 8 and source.batches_per_epoch == 3
    batch = source.batch(0)
    b = batch.n_items
    assert len(batch.terms) == b * (2 + 2)
    for j, i in enumerate(batch.items):
        item = source.items[i]
        assert batch.terms[j] == item.mention
        assert batch.terms[b + j] == source.dictionary.names[item.concept]
        assert batch.code_counts[j].item() == item.codes
    # one epoch visits every item once
    seen = [i for n in range(3) for i in source.batch(n).items]
    assert sorted(seen) == list(range(8))
    assert source.batch(3).items != source.batch(0).items or len(source.items) < 2
    objective = MtcgObjective(32)
    tokens = tiny_encoder.tokenize(batch.terms)
    hidden = tiny_encoder.model(**tokens).last_hidden_state
    emb = hidden.mean(1)
    parts = objective(emb, batch, cls=hidden[:, 0])
    assert set(parts) == {"loss", "triplet", "implication"}
    assert parts["loss"].item() == pytest.approx(
        parts["triplet"].item() + parts["implication"].item(), rel=1e-5
    )
    with pytest.raises(ValueError, match="CLS"):
        objective(emb, batch)


def test_mtcg_reads_composite_mentions_whole(tmp_path: Path) -> None:
    corpus = tmp_path / "train.txt"
    corpus.write_text(
        "1|t|Title\n1|a|breast and ovarian cancer here\n"
        "1\t0\t25\tbreast and ovarian cancer\tCompositeMention\tD001943|D010051\n\n"
    )
    config = TrainConfig.from_dict(
        dict(loss=LossKind.MTCG, mentions=(str(corpus),), mentions_format="pubtator")
    )
    assert training_mentions(config) == [("breast and ovarian cancer", ("D001943", "D010051"))]


def test_train_objective_mtcg_end_to_end(
    tiny_kg_dir: Path, tiny_bert_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mentions = tmp_path / "train.tsv"
    mentions.write_text(
        "T:0001\theart attacks\nT:0002\thigh bp\nT:0004|T:0006\tasthma and pneumonia\n"
        "T:0003\tsugar\nT:0009\tlung trouble\nT:0005\tbad headache\n"
    )
    out = tmp_path / "model"
    args = ["train", "--objective", "mtcg", "--kg", str(tiny_kg_dir), "--mentions", str(mentions)]
    args += ["--mentions-format", "tsv", "--negatives", "online", "--out", str(out)]
    args += ["--base-model", str(tiny_bert_path), "--steps", "7", "--mention-batch", "3"]
    args += ["--negatives-per-mention", "2", *TINY_TRAIN_ARGS]
    args += ["--lr", "1e-3", "--log-every", "1", "--checkpoint-every", "0"]
    code, _, err = run_main(args, capsys)
    assert code == 0, err
    log = [json.loads(line) for line in (out / "train_log.jsonl").read_text().splitlines()]
    assert [r["step"] for r in log] == list(range(1, 8))
    assert all({"triplet", "implication"} <= r.keys() for r in log)
    card = (out / "README.md").read_text()
    assert "online_refreshes | 2 |" in card  # 7 items, 3 per batch: steps 4 and 7 re-mine
    encoder = TermEncoder.load(out, device="cpu")  # a plain encoder folder
    assert encoder.encode(["asthma"]).shape == (1, 32)
    predictor = load_implication_predictor(out, encoder=encoder)
    assert set(predictor.predict(["asthma and pneumonia", "sugar"]).tolist()) <= {1, 2, 3}
    code, _, err = run_main(
        [
            "index",
            "build",
            "--kg",
            str(tiny_kg_dir),
            "--model",
            str(out),
            "--out",
            str(tmp_path / "idx"),
        ],
        capsys,
    )
    assert code == 0, err


def test_an_online_run_resumes_with_its_mined_negatives(
    tiny_bert_path: Path, tiny_kg: KnowledgeGraph, tmp_path: Path
) -> None:
    from termnorm.training.mtcg import mtcg_trainer

    def config(steps: int) -> TrainConfig:
        return TrainConfig.from_dict(
            dict(
                out=tmp_path / "model",
                base_model=tiny_bert_path,
                loss=LossKind.MTCG,
                steps=steps,
                mention_batch=3,
                negatives_per_mention=2,
                lr=1e-3,
                precision="fp32",
                device="cpu",
                freeze_embeddings=False,
                freeze_layers=0,
                log_every=1,
                checkpoint_every=4,
                clean_checkpoints=False,
            )
        )

    # 8 items, 3 per batch: log steps 4-6 are epoch 2 (mined negatives); the checkpoint after
    # step 4 holds them, so the resumed steps 5-6 must repeat the first run exactly
    mtcg_trainer(config(6), tiny_kg, MENTIONS).train()
    log = tmp_path / "model" / "train_log.jsonl"
    uninterrupted = [json.loads(line)["loss"] for line in log.read_text().splitlines()]
    result = mtcg_trainer(config(6), tiny_kg, MENTIONS).train(resume=True)
    assert result.steps == 6
    resumed = [json.loads(line)["loss"] for line in log.read_text().splitlines()]
    assert resumed == uninterrupted  # steps 5-6 again, with the checkpoint's negatives


def test_mtcg_trainer_weighs_implication_classes_from_its_items(
    tiny_bert_path: Path, tiny_kg: KnowledgeGraph, tmp_path: Path
) -> None:
    from termnorm.training import ImplicationWeighting
    from termnorm.training.mtcg import mtcg_trainer

    def objective(weighting: ImplicationWeighting) -> MtcgObjective:
        config = TrainConfig.from_dict(
            dict(
                out=tmp_path / "model",
                base_model=tiny_bert_path,
                loss=LossKind.MTCG,
                steps=1,
                device="cpu",
                freeze_layers=0,
                implication_class_weights=weighting,
            )
        )
        obj = mtcg_trainer(config, tiny_kg, MENTIONS).objective
        assert isinstance(obj, MtcgObjective)
        return obj

    # MENTIONS: 3 one-code mentions, a 2-code one and a 3-code one give 3 + 2 + 3 = 8 items
    # (one per gold concept), of classes 1, 2, 3 in 3 : 2 : 3
    weights = objective(ImplicationWeighting.BALANCED).implication.weights
    assert weights is not None
    assert weights.tolist() == pytest.approx([8 / (3 * 3), 8 / (3 * 2), 8 / (3 * 3)])
    assert objective(ImplicationWeighting.NONE).implication.weights is None
