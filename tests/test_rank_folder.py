"""The ranker folder and its Python entry point: a plain ranker trained by
``train_ranker(RankTrainSpec(...))`` is a sentence-transformers ``CrossEncoder`` scoring as
ours does; the folder layout of earlier rankers still loads; ``termnorm rank train`` is
``train_ranker`` (its options generated from the spec, defaults included)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from conftest import make_tiny_kg
from termnorm import api
from termnorm.search.rank import (
    KeywordCrossEncoder,
    RankerTrainConfig,
    RankTrainSpec,
    candidate_text,
    load_ranker,
    train_ranker,
)
from termnorm.search.stages.ranker.ranker import CARD_NAME

MENTIONS = [
    ("T:0001", "heart attacks"),
    ("T:0001", "attack of the heart"),
    ("T:0002", "high pressure"),
    ("T:0002", "raised blood pressure"),
    ("T:0003", "diabetic"),
    ("T:0004", "asthma attack"),
    ("T:0005", "headache migraine"),
    ("T:0006", "lung infections"),
]
SETTINGS = {"k_c": 3, "folds": 2, "max_length": 32, "holdout": 0.0}
TRAIN = {"epochs": 1, "batch_size": 6}


@pytest.fixture(scope="module")
def setup(tiny_bert_path: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The tiny index and a training mention file."""
    tmp = tmp_path_factory.mktemp("rank_folder")
    kg = make_tiny_kg().save(tmp / "kg", card={"sources": [{"format": "fixture"}]})
    api.build_index(kg, model=tiny_bert_path, out=tmp / "idx", show_progress=False)
    mentions = tmp / "train.tsv"
    mentions.write_text("".join(f"{c}\t{t}\n" for c, t in MENTIONS))
    return tmp / "idx", mentions


def _spec(index: Path, mentions: Path, model: Path) -> RankTrainSpec:
    return RankTrainSpec(
        index=index,
        mentions=(mentions,),
        mention_format="tsv",
        plain=True,
        base_model=model,
        train=RankerTrainConfig(**TRAIN),
        **SETTINGS,
    )


def test_a_plain_ranker_folder_is_a_sentence_transformers_cross_encoder(
    setup: tuple[Path, Path], tiny_bert_path: Path, tmp_path: Path
) -> None:
    from sentence_transformers import CrossEncoder

    index, mentions = setup
    folder = train_ranker(_spec(index, mentions, tiny_bert_path), tmp_path / "ranker")
    ours = load_ranker(folder)
    assert ours.plain and (folder / "modules.json").is_file()
    candidates = api.normalize("heart attack", index=index, k=4)
    expected = ours.score("heart attack", candidates)
    theirs = CrossEncoder(str(folder), device="cpu")
    pairs = [("heart attack", candidate_text(c)) for c in candidates]
    got = np.asarray(theirs.predict(pairs, batch_size=len(pairs)), dtype=np.float64)
    assert got.shape == expected.shape == (4,)
    assert np.allclose(got, expected, atol=1e-5)
    assert len(set(np.round(expected, 6))) > 1  # the scores tell candidates apart
    long = "a very long mention " * 20  # truncated to the ranker's pair length by both
    assert np.allclose(
        theirs.predict([(long, pairs[0][1])]), ours.score(long, candidates[:1]), atol=1e-5
    )


def test_an_earlier_plain_folder_layout_still_loads(tiny_bert_path: Path, tmp_path: Path) -> None:
    from safetensors.torch import save_file

    model = KeywordCrossEncoder.from_pretrained(tiny_bert_path, plain=True, max_length=32)
    old = tmp_path / "old"  # the layout every ranker had before: model/ + head.safetensors
    model.model.save_pretrained(str(old / "model"))
    model.tokenizer.save_pretrained(str(old / "model"))
    save_file(
        {k: v.contiguous() for k, v in model.head.state_dict().items()},
        str(old / "head.safetensors"),
    )
    (old / "cross_encoder.json").write_text(
        json.dumps({"plain": True, "max_length": 32, "dropout": 0.1})
    )
    texts = (["kidney cancer", "x"], ["renal cancer", "y"])
    again = KeywordCrossEncoder.load(old)
    assert torch.allclose(model.predict(*texts), again.predict(*texts))


def test_rank_train_cli_is_train_ranker(
    setup: tuple[Path, Path], tiny_bert_path: Path, tmp_path: Path
) -> None:
    from termnorm.cli.main import main

    index, mentions = setup
    args = [
        "rank",
        "train",
        "--index",
        str(index),
        "--mentions",
        str(mentions),
        "--format",
        "tsv",
        "--plain",
        "--model",
        str(tiny_bert_path),
        "--k-c",
        "3",
        "--folds",
        "2",
        "--max-length",
        "32",
        "--holdout",
        "0",
        "--epochs",
        "1",
        "--batch-size",
        "6",
        "--json",
        "--out",
        str(tmp_path / "cli"),
    ]
    with pytest.raises(SystemExit) as done:
        main(args)
    assert not done.value.code
    train_ranker(_spec(index, mentions, tiny_bert_path), tmp_path / "py")
    cards = [json.loads((tmp_path / f / CARD_NAME).read_text()) for f in ("cli", "py")]
    for card in cards:
        card.pop("created")
        card["metrics"].pop("seconds")
    assert cards[0] == cards[1]
    candidates = api.normalize("asthma", index=index, k=3)
    scores = [load_ranker(tmp_path / f).score("asthma", candidates) for f in ("cli", "py")]
    assert np.array_equal(scores[0], scores[1])


def test_rank_train_defaults_live_in_the_spec() -> None:
    import typer

    from termnorm.cli import rank_cmd

    app = typer.Typer()
    rank_cmd.register(app)
    command = typer.main.get_command(app).commands["rank"].commands["train"]  # type: ignore[attr-defined]
    skip = {"index", "out", "project", "db", "overwrite", "json_out", "help"}
    defaults = {p.name: p.default for p in command.params if p.name not in skip}
    spec = RankTrainSpec.from_options(index=Path("idx"), **defaults)
    assert spec == RankTrainSpec(index=Path("idx"))
    with pytest.raises(TypeError, match="unknown rank train setting"):
        RankTrainSpec.from_options(index=Path("idx"), epochz=3)


def test_rank_train_needs_training_data(setup: tuple[Path, Path], tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"--mentions FILE.*--project NAME"):
        train_ranker(RankTrainSpec(index=setup[0]), tmp_path / "r")
