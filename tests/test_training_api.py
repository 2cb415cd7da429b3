"""``termnorm.train``: the Python entry point equal to ``termnorm train`` (mentions, dev set,
overrides, unknown keys refused), and training mentions given as pairs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import termnorm
from termnorm.kg import KnowledgeGraph
from termnorm.training import TrainConfig, run_training

TINY = dict(
    k=8,
    m=2,
    max_length=16,
    precision="fp32",
    device="cpu",
    freeze_embeddings=False,
    freeze_layers=0,
    hard_refresh=2,
)


def test_train_with_mentions_and_a_dev_set(
    tiny_bert_path: Path, tiny_kg_dir: Path, tmp_path: Path
) -> None:
    mentions = tmp_path / "train.tsv"
    mentions.write_text("0001\theart attacks\n0002\thigh bp\n0004|0009\tasthma\n")
    dev = tmp_path / "dev.tsv"
    dev.write_text("T:0001\tcardiac infarction\nT:0002\tHTN\nT:0006\tpneumonitis\n")
    out = tmp_path / "model"
    result = termnorm.train(
        kg=tiny_kg_dir,
        out=out,
        base_model=tiny_bert_path,
        steps=4,
        train_data="od",
        mentions=[mentions],
        dev=dev,
        dev_format="tsv",
        eval_every=2,
        **TINY,
    )
    assert result.steps == 4 and not result.interrupted and result.out == out
    assert 0.0 <= result.final_metrics["dev_acc@1"] <= 1.0
    assert result.best is not None and result.best["step"] in (2, 4)
    card = (out / "README.md").read_text()
    assert "| domain terms_added | 2 |" in card and "## Dev results" in card
    saved = json.loads((out / "training_config.json").read_text())
    assert saved["train_data"] == "od" and saved["mentions"] == [str(mentions)]


def test_a_config_with_overrides_and_unknown_keys_refused(
    tiny_bert_path: Path, tiny_kg_dir: Path, tmp_path: Path
) -> None:
    config = TrainConfig.from_dict({"kg": tiny_kg_dir, "base_model": tiny_bert_path, **TINY})
    out = tmp_path / "m"
    result = termnorm.train(config, out=out, steps=2, loss="triplet", k=4)
    assert result.steps == 2
    assert json.loads((out / "training_config.json").read_text())["loss"] == "triplet"
    with pytest.raises(ValueError, match=r"unknown TrainConfig key.s. stepz .*did you mean steps"):
        termnorm.train(config, out=out, stepz=3)
    with pytest.raises(ValueError, match=r"termnorm\.train needs a KG folder"):
        termnorm.train(out=out)


def test_training_mentions_as_pairs(
    tiny_bert_path: Path, tiny_kg: KnowledgeGraph, tmp_path: Path
) -> None:
    config = TrainConfig.from_dict(
        {"out": tmp_path / "m", "base_model": tiny_bert_path, "steps": 2, "train_data": "od"} | TINY
    )
    pairs = [("heart attacks", ("T:0001",)), ("high bp", ("T:0002",))]
    result = run_training(config, tiny_kg, mentions=pairs)
    assert result.steps == 2
    assert "| domain terms_added | 2 |" in (result.out / "README.md").read_text()
    twice = TrainConfig.from_dict({**config.to_dict(), "mentions": ["x.tsv"]})
    with pytest.raises(ValueError, match="training mentions given twice"):
        run_training(twice, tiny_kg, mentions=pairs)
    plain = TrainConfig.from_dict({**config.to_dict(), "train_data": "o"})
    with pytest.raises(ValueError, match="--mentions is for --train-data od"):
        run_training(plain, tiny_kg, mentions=pairs)
