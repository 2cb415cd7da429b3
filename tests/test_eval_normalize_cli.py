"""``termnorm eval normalize``: JSON output, table, predictions file and errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from _cli import command_app
from termnorm.cli import eval_cmd
from termnorm.encoders import TermEncoder
from termnorm.errors import InputFormatError
from termnorm.index import TermIndex
from termnorm.kg import KnowledgeGraph

FIXTURES = Path(__file__).parent / "fixtures" / "mentions"


@pytest.fixture()
def app() -> typer.Typer:
    return command_app(eval_cmd.register)


@pytest.fixture()
def mentions_file(tmp_path: Path) -> Path:
    """Four mentions against the tiny KG: exact hit, typo, composite, unlinkable."""
    path = tmp_path / "mentions.tsv"
    path.write_text("0001\tHeart-attack\n0003\tdiabetis\n0004|0009\tasthma\n-1\tbroken leg\n")
    return path


def invoke(app: typer.Typer, *args: str | Path) -> dict[str, Any]:
    result = CliRunner().invoke(app, ["eval", "normalize", *map(str, args)])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_baseline_json_has_plain_top_level_metrics(
    app: typer.Typer, mentions_file: Path, tiny_kg_dir: Path
) -> None:
    out = invoke(
        app, "--baseline", "exact", "--kg", tiny_kg_dir, mentions_file, "--json", "-k", "5"
    )
    assert out["matcher"] == "exact" and out["format"] == "tsv" and out["ks"] == [1, 3, 5]
    assert out["acc@1"] == 0.5 and out["acc@5"] == 0.5 and out["mrr"] == 0.5
    assert out["composite_acc@1"] == 1.0  # "asthma" hits 0004, one of its gold IDs
    assert (out["n"], out["n_simple"], out["n_composite"], out["n_unlinkable"]) == (4, 2, 1, 1)
    assert "acc@10" not in out


def test_table_and_predictions(
    app: typer.Typer, mentions_file: Path, tiny_kg_dir: Path, tmp_path: Path
) -> None:
    pred = tmp_path / "pred.jsonl"
    args = ["--baseline", "tfidf", "--kg", tiny_kg_dir, mentions_file, "--predictions", pred]
    result = CliRunner().invoke(app, ["eval", "normalize", *map(str, args)])
    assert result.exit_code == 0, result.output
    assert "simple" in result.stdout and "acc@10 %" in result.stdout
    assert "unlinkable (not scored): 1" in result.stdout
    rows = [json.loads(line) for line in pred.read_text().splitlines()]
    assert [r["text"] for r in rows] == ["Heart-attack", "diabetis", "asthma", "broken leg"]
    assert rows[1]["predictions"][0]["concept_id"] == "T:0003"


def test_zero_shot_with_a_baseline_averages_folds(app: typer.Typer) -> None:
    out = invoke(app, "--zero-shot", "--baseline", "exact", FIXTURES / "cadec_fold", "--json")
    assert out["protocol"] == "zero-shot" and out["acc@1"] == 0.5 and out["folds"] == 1
    assert out["per_fold"]["cadec_fold"]["acc@1"] == 0.5 and out["n"] == 4


def test_index(
    app: typer.Typer,
    tiny_kg: KnowledgeGraph,
    tiny_encoder: TermEncoder,
    tmp_path: Path,
    mentions_file: Path,
) -> None:
    index_dir = TermIndex.build(tiny_kg, tiny_encoder, show_progress=False).save(tmp_path / "idx")
    out = invoke(app, "--index", index_dir, mentions_file, "--json")
    assert out["matcher"].startswith("embedding")
    assert 0.0 <= out["acc@1"] <= out["acc@10"] == 1.0  # the tiny KG has 10 concepts
    # abstaining below cosine 1 (no mention has a KG term's exact vector) misses everything;
    # a filter keeps only its concepts
    none = invoke(app, "--index", index_dir, mentions_file, "--json", "--min-score", "1")
    assert none["acc@10"] == 0.0 and none["n_failed"] == 0
    lung = invoke(app, "--index", index_dir, mentions_file, "--json", "--type", "lung")
    assert lung["acc@10"] == 0.0  # the simple mentions' concepts are not lung concepts


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "either --index INDEX_DIR or --baseline"),
        (["--baseline", "exact"], "--baseline needs --kg"),
        (["--baseline", "exact", "--kg", "kg", "--index", "idx"], "either --index"),
        (["--zero-shot", "--index", "idx"], "drop --index"),
        (["-k", "0", "--baseline", "exact", "--kg", "kg"], "-k must be at least 1"),
        (["--baseline", "exact", "--kg", "kg", "--min-score", "0.5"], "give --index"),
        (["--index", "idx", "--mode", "fuzzy"], "--mode must be term or concept"),
    ],
)
def test_usage_errors(app: typer.Typer, mentions_file: Path, args: list[str], message: str) -> None:
    result = CliRunner().invoke(app, ["eval", "normalize", *args, str(mentions_file)])
    assert result.exit_code == 2
    assert message in " ".join(result.output.split())


def test_several_files_need_zero_shot(app: typer.Typer, mentions_file: Path) -> None:
    result = CliRunner().invoke(
        app,
        [
            "eval",
            "normalize",
            "--baseline",
            "exact",
            "--kg",
            "kg",
            str(mentions_file),
            str(mentions_file),
        ],
    )
    assert result.exit_code == 2 and "several only with --zero-shot" in result.output


def test_missing_mentions_file_names_it(
    app: typer.Typer, tiny_kg_dir: Path, tmp_path: Path
) -> None:
    missing = tmp_path / "nope.txt"
    result = CliRunner().invoke(
        app, ["eval", "normalize", "--baseline", "exact", "--kg", str(tiny_kg_dir), str(missing)]
    )
    assert isinstance(result.exception, InputFormatError)
    assert str(result.exception) == f"{missing}: no such file or folder"


def test_eval_group_lists_its_commands(app: typer.Typer) -> None:
    result = CliRunner().invoke(app, ["eval", "--help"])
    assert result.exit_code == 0 and "normalize" in result.stdout


def test_errors_are_one_line_on_stderr(
    tiny_kg_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from termnorm.cli.main import main

    missing = tmp_path / "nope.txt"
    with pytest.raises(SystemExit) as exit_info:
        main(["eval", "normalize", "--baseline", "exact", "--kg", str(tiny_kg_dir), str(missing)])
    assert exit_info.value.code == 1
    assert capsys.readouterr().err == f"error: {missing}: no such file or folder\n"
