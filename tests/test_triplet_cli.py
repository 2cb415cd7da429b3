"""The CLI and API of issue 5: ``train --loss triplet``, ``--synonyms/--strategy`` on
``normalize`` and ``eval normalize``, ``api.add_synonyms`` / ``api.get_strategy``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import typer
from typer.testing import CliRunner

from termnorm import api
from termnorm.cli import eval_cmd, normalize_cmd, train_cmd
from termnorm.errors import EmptyResultError


@pytest.fixture()
def app() -> typer.Typer:
    root = typer.Typer()

    @root.callback()
    def _root() -> None:
        """Test root."""

    for module in (train_cmd, normalize_cmd, eval_cmd):
        module.register(root)
    return root


@pytest.fixture()
def index_dir(tmp_path: Path, tiny_kg_dir: Path, tiny_bert_path: Path) -> Path:
    out = tmp_path / "index"
    api.build_index(tiny_kg_dir, model=tiny_bert_path, out=out, show_progress=False)
    return out


@pytest.fixture()
def synonyms_file(tmp_path: Path) -> Path:
    """One domain synonym of T:0005 (migraine), one of an unknown concept."""
    path = tmp_path / "my_terms.tsv"
    path.write_text("T:0005\tsplitting head\nX:9999\tnothing known\n")
    return path


def run(app: typer.Typer, *args: str | Path) -> str:
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, (result.output, result.exception)
    return result.stdout


def test_normalize_with_synonyms_and_a_strategy(
    app: typer.Typer, index_dir: Path, synonyms_file: Path
) -> None:
    out = run(
        app,
        "normalize",
        "heart attack",
        "--index",
        index_dir,
        "--synonyms",
        synonyms_file,
        "--strategy",
        "d-t",
        "-k",
        "3",
        "--json",
    )
    payload = json.loads(out)
    # D-T searches the one usable domain synonym only
    assert [c["concept_id"] for c in payload[0]["candidates"]] == ["T:0005"]
    assert payload[0]["candidates"][0]["matched_term"] == "splitting head"


def test_eval_normalize_with_synonyms_and_a_strategy(
    app: typer.Typer, index_dir: Path, synonyms_file: Path, tmp_path: Path
) -> None:
    mentions = tmp_path / "dev.tsv"
    mentions.write_text("0005\tsick head\n0001\theart attack\n")
    out = run(
        app,
        "eval",
        "normalize",
        "--index",
        index_dir,
        mentions,
        "--synonyms",
        synonyms_file,
        "--strategy",
        "D-T",
        "-k",
        "1",
        "--json",
    )
    metrics = json.loads(out)
    assert metrics["acc@1"] == 0.5 and metrics["matcher"] == "d-t"


def test_strategy_errors_reach_the_user(
    app: typer.Typer, index_dir: Path, synonyms_file: Path
) -> None:
    runner = CliRunner()
    res = runner.invoke(app, ["normalize", "MI", "--index", str(index_dir), "--strategy", "d-t"])
    assert isinstance(res.exception, EmptyResultError)
    assert "needs domain synonyms" in str(res.exception)
    res = runner.invoke(app, ["normalize", "MI", "--index", str(index_dir), "--strategy", "x-t"])
    assert isinstance(res.exception, ValueError)
    assert "unknown search module 'x-t'" in str(res.exception)
    res = runner.invoke(
        app, ["eval", "normalize", "--baseline", "exact", "--kg", "k", "f.tsv", "--strategy", "o-t"]
    )
    assert res.exit_code != 0 and "give --index" in res.output


def test_api_adds_synonyms_to_a_loaded_index(index_dir: Path) -> None:
    index = api.load_index(index_dir)
    before = np.array(index.term_vectors)
    space = api.add_synonyms(index, [("T:0004", "wheezy chest"), ("T:0004", "wheezy chest")])
    assert space.synonym_report is not None and space.synonym_report.kept == 1
    matcher = api.get_strategy("d-c+od-c", space)
    assert matcher.normalize("wheezy chest", k=1)[0].concept_id == "T:0004"
    np.testing.assert_array_equal(np.asarray(index.term_vectors), before)
    assert api.get_strategy("o-c", index_dir).name == "o-c"


def test_train_triplet_od_from_the_cli(
    app: typer.Typer, tmp_path: Path, tiny_kg_dir: Path, tiny_bert_path: Path
) -> None:
    mentions = tmp_path / "train.tsv"
    mentions.write_text("0001\theart attacks\n0002\thigh bp\n0004|0009\tasthma\n")
    out = tmp_path / "model"
    printed = run(
        app,
        "train",
        "--kg",
        tiny_kg_dir,
        "--out",
        out,
        "--base-model",
        tiny_bert_path,
        "--loss",
        "triplet",
        "--train-data",
        "od",
        "--mentions",
        mentions,
        "--od-ratio",
        "0.5",
        "--steps",
        "2",
        "--k",
        "4",
        "--m",
        "2",
        "--precision",
        "fp32",
        "--device",
        "cpu",
        "--no-freeze-embeddings",
        "--freeze-layers",
        "0",
    )
    assert json.loads(printed)["steps"] == 2
    card = (out / "README.md").read_text()
    assert "| train_data | `od` |" in card and "sampled domain_texts" in card
    config = json.loads((out / "training_config.json").read_text())
    assert config["loss"] == "triplet" and config["mentions"] == [str(mentions)]
    res = CliRunner().invoke(
        app,
        [
            "train",
            "--kg",
            str(tiny_kg_dir),
            "--out",
            str(tmp_path / "m2"),
            "--loss",
            "triplet",
            "--mentions",
            str(mentions),
        ],
    )
    assert isinstance(res.exception, ValueError) and "--train-data od" in str(res.exception)
