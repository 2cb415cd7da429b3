"""CODER's zero-shot protocol: search each fold's standard.txt targets, average over folds."""

from __future__ import annotations

from pathlib import Path

import pytest

from termnorm.encoders import TermEncoder
from termnorm.evaluation.zero_shot import ZeroShotEvaluator, targets_kg
from termnorm.kg import KnowledgeGraph
from termnorm.mentions import Target
from termnorm.search.candidate import Matcher
from termnorm.search.lexical import ExactMatcher

FOLD = Path(__file__).parent / "fixtures" / "mentions" / "cadec_fold"


def second_fold(tmp_path: Path) -> Path:
    fold = tmp_path / "fold_b"
    fold.mkdir()
    (fold / "standard.txt").write_text("1\tfever\n2\tcough\n")
    (fold / "test.txt").write_text("1\tFever\n2\tcough\n")
    return fold


def test_targets_kg() -> None:
    kg = targets_kg([Target("10", "head pain"), Target("10", "headache"), Target("11", "nausea")])
    assert kg.concepts["concept_id"].tolist() == ["SNOMED:10", "SNOMED:11"]
    assert kg.concepts["name"].tolist() == ["head pain", "nausea"]
    assert kg.terms["term"].tolist() == ["head pain", "headache", "nausea"]


def test_each_fold_searches_only_its_targets_and_rates_are_averaged(tmp_path: Path) -> None:
    seen: list[list[str]] = []

    def exact(kg: KnowledgeGraph) -> Matcher:
        seen.append(sorted(kg.concepts["concept_id"]))
        return ExactMatcher(kg)

    evaluator = ZeroShotEvaluator([FOLD, second_fold(tmp_path)], ks=(1, 3))
    report = evaluator.evaluate(exact)
    assert seen == [["SNOMED:1001", "SNOMED:1002", "SNOMED:1003"], ["SNOMED:1", "SNOMED:2"]]
    # fold 1: "headache" and "HEADACHE!" match exactly, 'felt "sick"' and "sleepy" do not
    assert report.folds["cadec_fold"].metrics["zeroshot_acc@1"] == 0.5
    assert report.folds["fold_b"].metrics["zeroshot_acc@1"] == 1.0
    assert report.metrics["zeroshot_acc@1"] == pytest.approx(0.75)  # mean of folds, not pooled
    assert report.metrics["zeroshot_n"] == 6 and report.metrics["zeroshot_folds"] == 2
    assert evaluator.primary_metric == "zeroshot_acc@1"


def test_encoder_goes_through_the_index_and_normalizer(tiny_encoder: TermEncoder) -> None:
    metrics = ZeroShotEvaluator([FOLD], ks=(1, 3))(tiny_encoder)
    assert 0.0 <= metrics["zeroshot_acc@1"] <= 1.0
    assert metrics["zeroshot_acc@3"] == 1.0  # three targets: every gold is in the top 3
    assert metrics["zeroshot_n"] == 4


def test_a_test_file_path_uses_the_standard_txt_beside_it() -> None:
    evaluator = ZeroShotEvaluator([FOLD / "test.txt"])
    assert [label for label, _, _ in evaluator.folds] == ["cadec_fold/test"]
    assert len(evaluator.folds[0][2]) == 3


def test_fold_without_standard_txt(tmp_path: Path) -> None:
    (tmp_path / "test.txt").write_text("1\tfever\n")
    with pytest.raises(ValueError, match=r"standard\.txt: no such file"):
        ZeroShotEvaluator([tmp_path])


def test_no_fold() -> None:
    with pytest.raises(ValueError, match="at least one fold"):
        ZeroShotEvaluator([])
