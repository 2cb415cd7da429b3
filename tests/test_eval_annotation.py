"""The annotation evaluator on hand-made gold and predictions where every count is known."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from termnorm.errors import EmptyResultError
from termnorm.evaluation.annotation import LEVELS, AnnotationEvaluator, LevelScores
from termnorm.mentions import make_mention


@dataclass(frozen=True)
class Pred:
    doc_id: str
    start: int
    end: int
    concept_id: str
    detector: str = "dictionary"


GOLD = [
    make_mention("m1", "HP:1", "d1", 0, 5),
    make_mention("m2", "HP:2", "d1", 10, 20),
    make_mention("m3", "HP:3|HP:4", "d1", 30, 35),  # composite: either ID hits it
    make_mention("m4", "-1", "d1", 40, 45),  # unlinkable: span level only
    make_mention("m5", "HP:1", "d2", 0, 4),
]
DOCS = ["d1", "d2", "d3"]  # d3 has no gold mention

PREDS = [
    Pred("d1", 0, 5, "HP:1"),  # strict hit on m1
    Pred("d1", 0, 5, "hp:1"),  # duplicate of the above once IDs are keyed: counted once
    Pred("d1", 10, 18, "HP:2"),  # overlaps m2: lenient hit, strict miss
    Pred("d1", 30, 35, "HP:9"),  # m3's span, wrong concept
    Pred("d1", 40, 45, "HP:5"),  # the unlinkable span: span hit, concept false positive
    Pred("d2", 1, 4, "HP:7"),  # overlaps m5, wrong concept
    Pred("d3", 0, 3, "HP:1"),  # a document without gold: false positive everywhere
]


def test_every_level_on_a_known_corpus() -> None:
    scores = AnnotationEvaluator(GOLD, doc_ids=DOCS).evaluate(PREDS)
    assert scores.mention_strict == LevelScores(tp=1, fp=5, fn=3)
    assert scores.mention_lenient == LevelScores(tp=2, fp=4, fn=2)
    assert scores.span == LevelScores(tp=3, fp=3, fn=2)
    # d1: gold {1,2,3,4} vs {1,2,9,5}; d2: {1} vs {7}; d3: {} vs {1}
    assert scores.document == LevelScores(tp=2, fp=4, fn=3)
    assert (scores.n_missed_span, scores.n_wrong_concept) == (2, 1)  # m2, m5 / m3


def test_metrics_are_prefixed_micro_averages() -> None:
    evaluator = AnnotationEvaluator(GOLD, doc_ids=DOCS)
    metrics = evaluator(PREDS)
    assert evaluator.primary_metric == "annotate_mention_strict_f1"
    assert metrics["annotate_mention_strict_precision"] == pytest.approx(1 / 6)
    assert metrics["annotate_mention_strict_recall"] == pytest.approx(1 / 4)
    assert metrics["annotate_mention_strict_f1"] == pytest.approx(0.2)
    assert metrics["annotate_span_f1"] == pytest.approx(2 * 0.5 * 0.6 / 1.1)
    assert metrics["annotate_document_fn"] == 3.0
    assert metrics["annotate_n_wrong_concept"] == 1.0
    assert len(metrics) == 6 * len(LEVELS) + 2
    assert all(name.startswith("annotate_") for name in metrics)


def test_perfect_and_empty_predictions() -> None:
    linkable = [m for m in GOLD if m.gold_ids]
    perfect = [Pred(m.doc_id, m.start, m.end, m.gold_ids[-1]) for m in linkable]  # type: ignore[arg-type]
    scores = AnnotationEvaluator(GOLD).evaluate(perfect)
    assert scores.mention_strict == LevelScores(4, 0, 0)
    assert scores.mention_strict.f1 == 1.0
    assert scores.span == LevelScores(4, 0, 1)  # the unlinkable span was not predicted
    nothing = AnnotationEvaluator(GOLD).evaluate([])
    assert nothing.mention_strict == LevelScores(0, 0, 4)
    assert nothing.mention_strict.precision == nothing.mention_strict.f1 == 0.0
    assert nothing.document == LevelScores(0, 0, 5)


def test_alternative_ids_hit_through_the_lookup() -> None:
    gold = [make_mention("m2", "HP:2", "d1", 10, 20)]
    preds = [Pred("d1", 10, 20, "HP:100")]  # HP:2 is an alternative ID of HP:100
    assert AnnotationEvaluator(gold).evaluate(preds).mention_strict == LevelScores(0, 1, 1)
    alt = {"HP:100": ["HP:2"]}
    scores = AnnotationEvaluator(gold, alt_ids=lambda c: alt.get(c, [])).evaluate(preds)
    assert scores.mention_strict == LevelScores(1, 0, 0)
    assert scores.document == LevelScores(1, 0, 0)


def test_each_gold_and_each_prediction_is_matched_once() -> None:
    gold = [make_mention("a", "HP:1", "d", 0, 10), make_mention("b", "HP:1", "d", 5, 15)]
    one_pred = AnnotationEvaluator(gold).evaluate([Pred("d", 4, 12, "HP:1")])
    assert one_pred.mention_lenient == LevelScores(tp=1, fp=0, fn=1)
    two_preds = [Pred("d", 0, 3, "HP:1"), Pred("d", 2, 9, "HP:1")]
    single_gold = AnnotationEvaluator(gold[:1]).evaluate(two_preds)
    assert single_gold.mention_lenient == LevelScores(tp=1, fp=1, fn=0)
    assert single_gold.document == LevelScores(tp=1, fp=0, fn=0)


def test_prediction_outside_the_evaluated_documents_is_refused() -> None:
    with pytest.raises(ValueError, match=r"'elsewhere'.*annotate the gold's documents only"):
        AnnotationEvaluator(GOLD).evaluate([Pred("elsewhere", 0, 1, "HP:1")])


def test_gold_without_offsets_is_refused() -> None:
    gold = [make_mention("fever", "HP:1", "d1", location="gold.tsv:3")]
    with pytest.raises(ValueError, match=r"gold\.tsv:3.*no character offsets"):
        AnnotationEvaluator(gold)


def test_nothing_to_evaluate_is_refused() -> None:
    with pytest.raises(EmptyResultError, match="no document"):
        AnnotationEvaluator([])


def test_unknown_level_is_refused() -> None:
    scores = AnnotationEvaluator(GOLD).evaluate([])
    with pytest.raises(ValueError, match="unknown level 'token'"):
        scores.level("token")
