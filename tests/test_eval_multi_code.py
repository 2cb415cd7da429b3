"""Multi-code scores on hand-made predictions: exact sets, implication classes, recall@k."""

from __future__ import annotations

import pytest

from termnorm.evaluation.multi_code import (
    code_set_accuracy,
    concept_keys,
    implication_accuracy,
    recall_at_k,
)


def test_a_multi_code_mention_is_right_only_with_the_exact_set() -> None:
    gold = [["D1"], ["D2"], ["D3", "D4"], ["D5", "D6"], ["D7", "D8"]]
    predicted = [["MESH:D1"], ["D9"], ["D4", "D3"], ["D5"], ["D7", "D8", "D9"]]
    out = code_set_accuracy(predicted, gold)
    assert out["multi_code_uni"] == 0.5
    assert out["multi_code_multi"] == pytest.approx(1 / 3)
    assert out["multi_code_total"] == pytest.approx(2 / 5)
    assert out["multi_code_n_uni"] == 2 and out["multi_code_n_multi"] == 3


def test_alternative_ids_count_as_the_same_code() -> None:
    keys = concept_keys({"MESH:D009203": ["OMIM:608446"]})
    assert code_set_accuracy([["MESH:D009203"]], [["608446"]], keys)["multi_code_total"] == 1.0
    assert recall_at_k([["X", "MESH:D009203"]], [["OMIM:608446"]], (1, 2), keys) == {
        "recall@1": 0.0,
        "recall@2": 1.0,
    }


def test_implication_accuracy_by_class() -> None:
    out = implication_accuracy([1, 1, 2, 1, 3, 3], [1, 1, 2, 2, 3, 5])
    assert out["implication_1"] == 1.0 and out["implication_uni"] == 1.0
    assert out["implication_2"] == 0.5
    assert out["implication_3"] == 1.0
    assert out["implication_multi"] == 0.75
    assert out["implication_total"] == pytest.approx(5 / 6)
    assert implication_accuracy([1], [1]).keys() >= {"implication_n_2"}
    assert "implication_2" not in implication_accuracy([1], [1])
    with pytest.raises(ValueError, match="1, 2 or 3"):
        implication_accuracy([4], [1])


def test_recall_at_k_needs_every_gold_code() -> None:
    ranked = [["A", "B", "C"], ["A", "B", "C"], ["C", "A"]]
    gold = [["B"], ["A", "C"], ["D"]]
    out = recall_at_k(ranked, gold, ks=(1, 2, 3))
    assert out == {
        "recall@1": 0.0,
        "recall@2": pytest.approx(1 / 3),
        "recall@3": pytest.approx(2 / 3),
    }
    with pytest.raises(ValueError, match="no mention"):
        recall_at_k([[]], [[]])
