"""Triplet training on the tiny BERT: the loss falls, and the shared trainer's engineering
(checkpoints, resume, log, model card) carries over to ``--loss triplet``."""

from __future__ import annotations

import json
from pathlib import Path

import torch

from termnorm.encoders import TermEncoder
from termnorm.encoders.pooling import pool
from termnorm.kg import KnowledgeGraph
from termnorm.training.config import LossKind, Precision, TrainConfig
from termnorm.training.triplet import TripletObjective, TripletSampler, triplet_trainer
from termnorm.training.triplet_data import TrainData, build_triplet_corpus

MENTIONS = [("heart attacks", ("T:0001",)), ("high bp", ("T:0002",)), ("x", ("-1",))]


def test_triplet_training_decreases_the_loss(
    tiny_kg: KnowledgeGraph, tiny_encoder: TermEncoder
) -> None:
    torch.manual_seed(0)
    corpus = build_triplet_corpus(tiny_kg, TrainData.O)
    sampler = TripletSampler(corpus, batch_size=16, seed=0)
    batch = sampler.batch(0)
    objective = TripletObjective()
    model = tiny_encoder.model.train()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    tokens = tiny_encoder.tokenize(batch.terms)
    losses = []
    for _ in range(15):
        hidden = model(**tokens).last_hidden_state
        loss = objective(pool(hidden, tokens["attention_mask"], tiny_encoder.pooling), batch)[
            "loss"
        ]
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert sum(losses[-3:]) / 3 < 0.8 * sum(losses[:3]) / 3


def test_sampler_batches_have_a_positive_for_every_anchor(tiny_kg: KnowledgeGraph) -> None:
    corpus = build_triplet_corpus(tiny_kg, TrainData.OD, MENTIONS, ratio=1.0)
    sampler = TripletSampler(corpus, batch_size=8, texts_per_concept=2, seed=1, shards=2)
    for step in range(3):
        for shard in range(2):
            batch = sampler.batch(step, shard)
            labels = batch.labels.tolist()
            assert len(batch.terms) == len(labels) == 8
            assert all(labels.count(lab) >= 2 for lab in labels)
    assert sampler.batch(2, 1).terms == TripletSampler(corpus, 8, 2, 1, 2).batch(2, 1).terms
    assert sampler.stats()["domain_texts"] == len(tiny_kg.terms)


def _config(out: Path, bert: Path, steps: int, **kw: object) -> TrainConfig:
    return TrainConfig.from_dict(
        dict(
            out=out,
            base_model=bert,
            loss=LossKind.TRIPLET,
            steps=steps,
            k=4,
            m=2,
            lr=1e-3,
            precision=Precision.FP32,
            log_every=1,
            device="cpu",
            freeze_embeddings=False,
            freeze_layers=0,
            **kw,
        )
    )


def test_trainer_runs_train_od_and_writes_the_model(
    tmp_path: Path, tiny_bert_path: Path, tiny_kg: KnowledgeGraph
) -> None:
    config = _config(tmp_path / "model", tiny_bert_path, 3, train_data="od", od_ratio=0.5)
    result = triplet_trainer(config, tiny_kg, MENTIONS).train()
    assert result.steps == 3 and not result.interrupted
    out = result.out
    assert (out / "config.json").is_file() and (out / "modules.json").is_file()
    records = [json.loads(line) for line in (out / "train_log.jsonl").read_text().splitlines()]
    assert [r["step"] for r in records] == [1, 2, 3]
    assert all("triplet" in r for r in records)
    card = (out / "README.md").read_text()
    assert "triplet" in card and "domain_texts" in card
    TermEncoder.load(out, device="cpu").encode(["heart attack"])


def test_trainer_resumes_a_triplet_run(
    tmp_path: Path, tiny_bert_path: Path, tiny_kg: KnowledgeGraph
) -> None:
    out = tmp_path / "model"
    first = _config(out, tiny_bert_path, 4, checkpoint_every=2, clean_checkpoints=False)
    triplet_trainer(first, tiny_kg).train()
    log = out / "train_log.jsonl"
    uninterrupted = [json.loads(line)["loss"] for line in log.read_text().splitlines()]
    longer = _config(out, tiny_bert_path, 6, checkpoint_every=2, clean_checkpoints=False)
    result = triplet_trainer(longer, tiny_kg).train(resume=True)
    assert result.steps == 6
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert [r["step"] for r in records] == [1, 2, 3, 4, 5, 6]  # resumed after step 2
    # counter-based batches and reseeded dropout: steps 3-4 repeat the first run exactly
    assert [r["loss"] for r in records[2:4]] == uninterrupted[2:4]
