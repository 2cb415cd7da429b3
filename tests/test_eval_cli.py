"""The embedding-evaluation commands, ``neighbors`` and their errors, end to end on fixtures."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from termnorm.cli.main import main


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exit_info:
        main(args)
    captured = capsys.readouterr()
    return int(exit_info.value.code or 0), captured.out, captured.err


def test_registering_the_lab_commands_imports_no_lab_module() -> None:
    code = (
        "import sys, typer; from termnorm.cli import register_all; register_all(typer.Typer()); "
        "print(sorted(m for m in sys.modules if m.startswith('termnorm.lab')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_mcsm_json_names_metrics_plainly(tiny_kg_dir: Path, tiny_bert_path: Path, capsys) -> None:
    code, out, _ = run(
        [
            "eval",
            "mcsm",
            "--kg",
            str(tiny_kg_dir),
            "--model",
            str(tiny_bert_path),
            "-k",
            "3",
            "--json",
        ],
        capsys,
    )
    assert code == 0
    payload = json.loads(out)
    assert payload["k"] == 3 and 0.0 <= payload["mcsm_mean"] <= payload["max"]
    assert {t["semantic_type"] for t in payload["types"]} == {"cardio", "lung", "other"}


def test_relation_clustering_relatedness_json(
    tiny_kg_dir: Path, tiny_bert_path: Path, tmp_path: Path, capsys
) -> None:
    model = ["--model", str(tiny_bert_path)]
    code, out, _ = run(
        ["eval", "relation", "--kg", str(tiny_kg_dir), *model, "--epochs", "2", "--json"], capsys
    )
    assert code == 0 and {"accuracy", "majority", "train", "test"} <= set(json.loads(out))
    code, out, _ = run(["eval", "clustering", "--kg", str(tiny_kg_dir), *model, "--json"], capsys)
    assert code == 0 and {"f1", "precision", "recall", "threshold"} <= set(json.loads(out))
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("heart attack\tmyocardial infarction\t9\nasthma\tmigraine\t1\nanemia\t\t5\n")
    code, out, _ = run(["eval", "relatedness", str(pairs), *model, "--json"], capsys)
    payload = json.loads(out)
    assert code == 0 and payload["pairs"] == 3 and payload["evaluated"] == 2
    assert payload["coverage"] == pytest.approx(2 / 3)
    assert payload["skipped"] == [{"pair": 3, "term1": "anemia", "term2": ""}]
    assert payload["spearman"] is None  # two pairs: no correlation to report


def test_errors_are_one_line_naming_the_problem(
    tiny_kg_dir: Path, tiny_bert_path: Path, tmp_path: Path, capsys
) -> None:
    code, _, err = run(
        ["eval", "linkpred", "--kg", str(tiny_kg_dir), "--model", str(tiny_bert_path)], capsys
    )
    assert code == 1 and "relation head (relations/)" in err
    code, _, err = run(["eval", "relatedness", str(tmp_path / "none.tsv")], capsys)
    assert code == 1 and "none.tsv: relatedness pair file not found" in err
    code, _, err = run(["eval", "mcsm", "--kg", str(tiny_kg_dir), "--vectors", "best"], capsys)
    assert code == 2 and "--vectors" in err


def test_neighbors_compares_indexes(
    tiny_kg_dir: Path, tiny_encoder, tmp_path: Path, capsys
) -> None:
    from termnorm.index import TermIndex
    from termnorm.kg import KnowledgeGraph

    index = TermIndex.build(KnowledgeGraph.load(tiny_kg_dir), tiny_encoder, show_progress=False)
    folder = index.save(tmp_path / "idx")
    code, out, _ = run(
        [
            "neighbors",
            "heart attack",
            "asthma",
            "--index",
            str(folder),
            "--index",
            str(folder),
            "-k",
            "3",
            "--json",
        ],
        capsys,
    )
    payload = json.loads(out)
    assert code == 0 and len(payload) == 4
    first = payload[0]
    assert first["query"] == "heart attack" and len(first["neighbors"]) == 3
    top = first["neighbors"][0]
    assert set(top) == {
        "concept_id",
        "name",
        "score",
        "matched_term",
        "rank",
        "source",
        "term_source",
        "is_preferred",
        "semantic_types",
        "expanded_from",
        "recall_score",
        "ranker_score",
        "expansion",
        "expansion_source",
    }
    # "heart attack" is a term of T:0001, so the best score is its own cosine, 1 (float16
    # storage moves a score by at most 2**-11)
    assert top["rank"] == 1 and top["score"] == pytest.approx(1.0, abs=2**-11)
    assert "T:0001" in [n["concept_id"] for n in first["neighbors"]]
    assert payload[2]["query"] == "heart attack"  # second index, same order
    code, out, _ = run(["neighbors", "heart attack", "--index", str(folder)], capsys)
    assert code == 0 and "myocardial infarction" in out
