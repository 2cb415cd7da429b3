"""Held-out relation triplets: ``holdout_relations``, ``termnorm kg split`` and
``termnorm eval linkpred --triplets``."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from termnorm.cli.main import _register, app, main
from termnorm.kg import KnowledgeGraph
from termnorm.kg.split import HELDOUT_FILE, holdout_relations

runner = CliRunner()


def _edges(df: pd.DataFrame) -> set[tuple[str, str, str]]:
    return set(zip(df["head"], df["relation"], df["tail"], strict=True))


def test_split_is_a_seeded_per_label_partition(tiny_kg: KnowledgeGraph) -> None:
    train, heldout = holdout_relations(tiny_kg, test_fraction=0.5, seed=3)
    # isa has 3 triplets -> round(1.5) = 2 held out; risk_factor_of has 2 -> 1 held out
    assert heldout["relation"].value_counts().to_dict() == {"isa": 2, "risk_factor_of": 1}
    assert _edges(train.relations) | _edges(heldout) == _edges(tiny_kg.relations)
    assert not _edges(train.relations) & _edges(heldout)
    assert set(train.relations["relation"]) == {"isa", "risk_factor_of"}  # every label keeps one
    assert len(train.terms) == len(tiny_kg.terms)  # held-out tails stay searchable
    _, heldout_again = holdout_relations(tiny_kg, test_fraction=0.5, seed=3)
    assert _edges(heldout_again) == _edges(heldout)
    assert train.card["holdout"]["heldout_relations"] == 3


def test_split_never_empties_a_label(tiny_kg: KnowledgeGraph) -> None:
    train, heldout = holdout_relations(tiny_kg, test_fraction=0.9, seed=0)
    assert train.relations["relation"].value_counts().to_dict() == {"isa": 1, "risk_factor_of": 1}
    assert len(heldout) == 3


@pytest.mark.parametrize("fraction", [0.0, 1.0, -0.1])
def test_split_rejects_bad_fractions(tiny_kg: KnowledgeGraph, fraction: float) -> None:
    with pytest.raises(ValueError, match="test_fraction must be between 0 and 1"):
        holdout_relations(tiny_kg, fraction)


def test_split_needs_relations(tiny_kg: KnowledgeGraph) -> None:
    no_edges = KnowledgeGraph(tiny_kg.concepts, tiny_kg.terms, tiny_kg.relations.iloc[0:0])
    with pytest.raises(ValueError, match="no relations to hold out"):
        holdout_relations(no_edges)


def test_kg_split_cli_writes_train_kg_and_heldout_edges(tiny_kg_dir: Path, tmp_path: Path) -> None:
    _register()
    out = tmp_path / "train"
    result = runner.invoke(
        app,
        ["kg", "split", str(tiny_kg_dir), "--out", str(out), "--test-fraction", "0.5", "--json"],
    )
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    train = KnowledgeGraph.load(out)
    heldout = pd.read_parquet(out / HELDOUT_FILE)
    assert summary["train_relations"] == len(train.relations) == 2
    assert summary["heldout_relations"] == len(heldout) == 3
    assert list(heldout.columns) == ["head", "relation", "tail"]


def test_linkpred_refuses_a_missing_triplets_file(
    tiny_kg_dir: Path, tiny_bert_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nope.parquet"
    with pytest.raises(SystemExit) as exc:
        main(
            [
                "eval",
                "linkpred",
                "--kg",
                str(tiny_kg_dir),
                "--model",
                str(tiny_bert_path),
                "--triplets",
                str(missing),
            ]
        )
    assert exc.value.code == 1
    assert (
        "nope.parquet: no such file; write one with 'termnorm kg split'" in capsys.readouterr().err
    )


def test_linkpred_ranks_exactly_the_heldout_edges(
    tiny_kg_dir: Path, tiny_bert_path: Path, tmp_path: Path
) -> None:
    import shutil

    from termnorm.losses.relation_head import RelationHead

    _register()
    model = tmp_path / "model"
    shutil.copytree(tiny_bert_path, model)
    RelationHead(["isa", "risk_factor_of"], 32).save(model)
    train = tmp_path / "train"
    split = runner.invoke(
        app, ["kg", "split", str(tiny_kg_dir), "--out", str(train), "--test-fraction", "0.5"]
    )
    assert split.exit_code == 0, split.output
    result = runner.invoke(
        app,
        [
            "eval",
            "linkpred",
            "--kg",
            str(tiny_kg_dir),
            "--model",
            str(model),
            "--triplets",
            str(train / HELDOUT_FILE),
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    metrics = json.loads(result.stdout)
    assert metrics["triplets"] == 3
    assert metrics["dropped"] == 0
    assert 0.0 <= metrics["hits@1"] <= metrics["hits@10"] <= 1.0
