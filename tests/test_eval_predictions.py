"""Prediction files: what the evaluators write is what ``eval compare``/``select`` read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _eval_fakes import kg_from, prediction_row, write_prediction_file
from termnorm.errors import InputFormatError
from termnorm.evaluation.normalization import NormalizationEvaluator, NormalizationReport
from termnorm.evaluation.predictions import (
    mention_key,
    prediction_record,
    read_correctness,
    read_documents,
    read_records,
)
from termnorm.evaluation.zero_shot import ZeroShotEvaluator
from termnorm.mentions import make_mention
from termnorm.search.lexical import ExactMatcher

KG = kg_from(
    {
        "X:1": ("héart attack", ["mi"], ["Disease"]),
        "X:2": ("asthma", [], ["Disease"]),
    }
)


def _report() -> NormalizationReport:
    mentions = [
        make_mention("héart attack", "X:1", "doc1", location="/corpus/a.txt:3"),
        make_mention("asthma", "X:1", "doc1", location="/corpus/a.txt:4"),
        make_mention("asthma and mi", "X:1|X:2", "doc2", location="/corpus/b.txt:1"),
        make_mention("broken leg", "-1", "doc2", location="/corpus/b.txt:2"),
    ]
    return NormalizationEvaluator(mentions, ks=(1, 3)).evaluate(ExactMatcher(KG))


def test_written_records_read_back_unchanged_in_the_documented_key_order(tmp_path: Path) -> None:
    report = _report()
    path = report.write_predictions(tmp_path / "new" / "pred.jsonl")
    lines = path.read_text(encoding="utf-8").splitlines()
    assert "héart attack" in lines[0]  # UTF-8 as is, not \u escapes
    records = read_records(path)
    assert records == [prediction_record(r) for r in report.results]
    assert list(records[0]) == [
        "text",
        "gold_ids",
        "kind",
        "doc_id",
        "start",
        "end",
        "location",
        "rank",
        "correct_at_1",
        "parts",
        "part_ranks",
        "error",
        "query",
        "expanded_from",
        "predictions",
    ]
    first = records[0]["predictions"][0]
    assert first["concept_id"] == "X:1" and first["rank"] == 1 and first["correct"] is True
    assert records[1]["rank"] is None and records[1]["correct_at_1"] is False
    assert records[2]["kind"] == "composite" and records[2]["parts"] == ["asthma", "mi"]


def test_readers_score_the_simple_mentions_of_a_written_file(tmp_path: Path) -> None:
    path = _report().write_predictions(tmp_path / "pred.jsonl")
    correct = read_correctness(path)
    assert correct == {
        ("", "a.txt:3", None, None, "héart attack"): True,
        ("", "a.txt:4", None, None, "asthma"): False,
    }
    assert set(read_documents(path).values()) == {"doc1"}


def test_zero_shot_records_start_with_their_fold(tmp_path: Path) -> None:
    fold = Path(__file__).parent / "fixtures" / "mentions" / "cadec_fold"
    other = tmp_path / "fold_b"
    other.mkdir()
    (other / "standard.txt").write_text("1\tfever\n")
    (other / "test.txt").write_text("1\tfever\n")
    report = ZeroShotEvaluator([fold, other], ks=(1,)).evaluate(ExactMatcher)
    path = report.write_predictions(tmp_path / "zs.jsonl")
    records = read_records(path)
    assert [next(iter(r.items())) for r in (records[0], records[-1])] == [
        ("fold", "cadec_fold"),
        ("fold", "fold_b"),
    ]
    assert records[-1] == prediction_record(report.folds["fold_b"].results[0], fold="fold_b")
    assert mention_key(records[-1])[0] == "fold_b"  # the same line of two folds differs


def test_read_correctness_skips_composites_and_uses_rank_for_k(tmp_path: Path) -> None:
    path = write_prediction_file(tmp_path / "p.jsonl", [1, 3, None])
    assert list(read_correctness(path, 1).values()) == [True, False, False]
    assert list(read_correctness(path, 5).values()) == [True, True, False]
    assert next(iter(read_correctness(path)))[1] == "doc:0"  # file name and line, no directory
    with pytest.raises(InputFormatError, match=r"top 5 candidates only.*-k 10"):
        read_correctness(path, 10)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"concept_id": "X"}\n', r"bad\.jsonl:1: not a prediction record"),
        ("id\ttext\n", r"bad\.jsonl:1: not a prediction record"),
        ("5\n", r"bad\.jsonl:1: not a prediction record"),
        (
            json.dumps(prediction_row(0, 1)) + "\n" + json.dumps(prediction_row(0, 2)) + "\n",
            r":2: mention .* twice",
        ),
        (json.dumps(prediction_row(0, None, kind="composite")) + "\n", "no simple"),
        ("", "no simple"),
    ],
)
def test_read_correctness_errors(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(content)
    with pytest.raises(InputFormatError, match=message):
        read_correctness(path)


def test_missing_file_says_how_to_make_one(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="--predictions"):
        read_correctness(tmp_path / "missing.jsonl")


def test_read_documents_uses_doc_id_else_the_file(tmp_path: Path) -> None:
    rows = [
        prediction_row(0, 1),
        {**prediction_row(1, 1), "doc_id": "PMID7"},
        prediction_row("x", None, kind="composite"),
    ]
    path = tmp_path / "p.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    assert list(read_documents(path).values()) == ["doc", "PMID7"]
    with pytest.raises(FileNotFoundError, match="no predictions file"):
        read_documents(tmp_path / "missing.jsonl")
