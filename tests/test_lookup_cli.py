"""``termnorm lookup ID``: a concept by its ID; ``normalize`` warns when a query is an ID."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from _cli import run_main
from termnorm.encoders import TermEncoder
from termnorm.index import TermIndex
from termnorm.kg import KnowledgeGraph


@pytest.fixture()
def index_dir(tiny_kg: KnowledgeGraph, tiny_encoder: TermEncoder, tmp_path: Path) -> Path:
    return TermIndex.build(tiny_kg, tiny_encoder, show_progress=False).save(tmp_path / "idx")


def test_lookup_json_bare_and_namespaced(
    index_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_main(
        ["lookup", "T:0004", "0009", "--index", str(index_dir), "--json"], capsys
    )
    assert code == 0, err
    asthma, lung = json.loads(out)
    assert (asthma["concept_id"], asthma["name"], asthma["semantic_types"]) == (
        "T:0004",
        "asthma",
        ["lung"],
    )
    assert {s["term"] for s in asthma["synonyms"]} == {
        "asthma",
        "bronchial asthma",
        "asthmatic disease",
    }
    assert lung["concept_id"] == "T:0009"  # the bare ID resolves
    assert asthma["relations"] == [
        {"relation": "isa", "direction": "out", "concept_id": "T:0009", "name": "lung disease"}
    ]
    assert {(r["direction"], r["concept_id"]) for r in lung["relations"]} == {
        ("in", "T:0004"),
        ("in", "T:0006"),
    }


def test_lookup_table(index_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_main(["lookup", "T:0004", "--index", str(index_dir)], capsys)
    assert code == 0
    assert "T:0004" in out and "bronchial asthma" in out and "(preferred)" in out and "lung" in out
    assert "-isa-> T:0009 lung disease" in out


@pytest.mark.parametrize(
    ("ids", "message"),
    [
        (["T:9999"], r"^error: no concept 'T:9999' in index .*neither as a concept ID nor"),
        (["T:0004", "T:9998", "T:9999"], r"unknown: 'T:9998', 'T:9999'\)$"),
    ],
)
def test_an_unknown_id_is_an_error(
    ids: list[str], message: str, index_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_main(["lookup", *ids, "--index", str(index_dir)], capsys)
    assert code == 1 and out == ""
    assert len(err.strip().splitlines()) == 1
    assert re.search(message, err.strip()), err


def test_normalize_warns_when_a_query_is_a_concept_id(
    index_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_main(
        ["normalize", "T:0004", "0006", "asthma", "--index", str(index_dir)], capsys
    )
    assert code == 0
    warnings = [line for line in err.splitlines() if line.startswith("warning:")]
    assert warnings == [
        "warning: 'T:0004' is the ID of T:0004 in this index; normalize searches it as text. "
        "To see the concept: termnorm lookup T:0004",
        "warning: '0006' is the ID of T:0006 in this index; normalize searches it as text. "
        "To see the concept: termnorm lookup 0006",
    ]
