"""NormalizationEvaluator on a fake matcher whose answers are fixed, so every metric is known."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from termnorm.errors import EmptyResultError
from termnorm.evaluation.normalization import NormalizationEvaluator, rank_metrics
from termnorm.mentions import Mention, make_mention
from termnorm.mentions.composite import CompositeRule, split_composite
from termnorm.search.candidate import Candidate, Matcher
from termnorm.search.query import QueryError


class FakeMatcher:
    """Answers from a table ``text -> [concept_id, ...]``; unknown texts get no candidate."""

    name = "fake"

    def __init__(
        self,
        answers: Mapping[str, Sequence[str]],
        alt: Mapping[str, Sequence[str]] | None = None,
        fail_on: Sequence[str] = (),
        error: type[Exception] = QueryError,
    ) -> None:
        self.answers = answers
        self.alt = alt or {}
        self.fail_on = set(fail_on)
        self.error = error
        self.calls: list[tuple[list[str], int]] = []

    def normalize_batch(self, texts: Sequence[str], k: int = 5) -> list[list[Candidate]]:
        self.calls.append((list(texts), k))
        if self.fail_on & set(texts):
            raise self.error("cannot embed this text")
        return [
            [
                Candidate(cid, cid, 1.0 / r, cid, r)
                for r, cid in enumerate(self.answers.get(t, ()), 1)
            ][:k]
            for t in texts
        ]

    def alt_ids(self, concept_id: str) -> Sequence[str]:
        return self.alt.get(concept_id, ())


ANSWERS = {
    "a": ["T:X1", "T:X2"],  # gold X1: rank 1
    "b": ["T:X1", "T:X3", "T:X2"],  # gold X2: rank 3
    "c": ["T:X1"],  # gold X9: miss
    "d": ["Q:7"],  # gold MESH:V5 reached through Q:7's alt id "v5": rank 1
    "e and f cancer": ["T:X3", "T:X2"],  # composite X1|X2: any rule rank 2
    "e cancer": ["T:X1"],  # part 1: rank 1
    "f cancer": ["T:X3", "T:X4", "T:X1"],  # part 2: rank 3 -> parts rule rank 3
    "nothing": ["T:X1"],
}


def mentions() -> list[Mention]:
    return [
        make_mention("a", "X1", "d1"),
        make_mention("b", "X2", "d1"),
        make_mention("c", "X9", "d1"),
        make_mention("d", "MESH:V5", "d2"),
        make_mention("e and f cancer", "X1|X2", "d2"),
        make_mention("nothing", "-1", "d2"),
    ]


@pytest.fixture()
def matcher() -> FakeMatcher:
    return FakeMatcher(ANSWERS, alt={"Q:7": ["v5"]})


def test_simple_composite_and_all_metrics_are_exact(matcher: FakeMatcher) -> None:
    metrics = NormalizationEvaluator(mentions())(matcher)
    expected = {
        # simple ranks: 1, 3, miss, 1
        "normalize_acc@1": 2 / 4,
        "normalize_acc@3": 3 / 4,
        "normalize_acc@5": 3 / 4,
        "normalize_acc@10": 3 / 4,
        "normalize_mrr": (1 + 1 / 3 + 0 + 1) / 4,
        # composite, any gold ID: rank 2; every part: max(1, 3) = 3
        "normalize_composite_acc@1": 0.0,
        "normalize_composite_acc@3": 1.0,
        "normalize_composite_mrr": 1 / 2,
        "normalize_composite_parts_acc@1": 0.0,
        "normalize_composite_parts_acc@3": 1.0,
        "normalize_composite_parts_mrr": 1 / 3,
        # all linkable (composite by the 'any' rule): 1, 3, miss, 1, 2
        "normalize_all_acc@1": 2 / 5,
        "normalize_all_acc@3": 4 / 5,
        "normalize_all_mrr": (1 + 1 / 3 + 1 + 1 / 2) / 5,
        "normalize_n": 6,
        "normalize_n_simple": 4,
        "normalize_n_composite": 1,
        "normalize_n_unlinkable": 1,
        "normalize_n_blank": 0,
        "normalize_n_failed": 0,
    }
    for key, value in expected.items():
        assert metrics[key] == pytest.approx(value), key


def test_parts_rule_changes_only_the_all_figures(matcher: FakeMatcher) -> None:
    any_rule = NormalizationEvaluator(mentions())(matcher)
    parts = NormalizationEvaluator(mentions(), composite_rule=CompositeRule.PARTS)(matcher)
    assert parts["normalize_all_mrr"] == pytest.approx((1 + 1 / 3 + 1 + 1 / 3) / 5)
    assert parts["normalize_acc@1"] == any_rule["normalize_acc@1"]
    assert parts["normalize_composite_acc@3"] == any_rule["normalize_composite_acc@3"]


def test_each_distinct_text_is_queried_once_with_the_largest_k(matcher: FakeMatcher) -> None:
    twice = [*mentions(), make_mention("a", "X1", "d3")]
    NormalizationEvaluator(twice, ks=(1, 5))(matcher)
    ((texts, k),) = matcher.calls
    assert k == 5
    assert sorted(texts) == sorted(set(texts)) and "e cancer" in texts and texts.count("a") == 1


def test_primary_metric_and_prefix(matcher: FakeMatcher) -> None:
    evaluator = NormalizationEvaluator(mentions(), ks=(3, 1), name="ncbi")
    metrics = evaluator(matcher)
    assert evaluator.primary_metric == "ncbi_acc@1"
    assert all(key.startswith("ncbi_") for key in metrics)
    assert "ncbi_acc@5" not in metrics


def test_composite_keys_absent_without_composite_mentions(matcher: FakeMatcher) -> None:
    metrics = NormalizationEvaluator(mentions()[:4])(matcher)
    assert metrics["normalize_n_composite"] == 0
    assert not any("composite_acc" in key for key in metrics)
    assert metrics["normalize_all_acc@1"] == metrics["normalize_acc@1"]


def test_dataset_parts_override_the_splitter() -> None:
    mention = make_mention("HPRT-APRT-deficient", "X1|X2", "d", parts=("HPRT", "APRT"))
    fake = FakeMatcher({"HPRT": ["T:X1"], "APRT": ["T:X5", "T:X2"]})
    report = NormalizationEvaluator([make_mention("a", "X1", "d"), mention]).evaluate(fake)
    assert report.results[1].part_ranks == (1, 2)
    assert report.metrics["normalize_composite_parts_mrr"] == pytest.approx(1 / 2)
    assert report.metrics["normalize_composite_mrr"] == 0.0  # whole text: no candidate


def test_blank_text_is_a_miss_and_never_sent(matcher: FakeMatcher) -> None:
    metrics = NormalizationEvaluator([*mentions(), make_mention("  ", "X1", "d")])(matcher)
    assert metrics["normalize_n_blank"] == 1
    assert metrics["normalize_acc@1"] == pytest.approx(2 / 5)
    assert all(t.strip() for t in matcher.calls[0][0])


def test_a_text_the_matcher_fails_on_is_reported(tmp_path: Path) -> None:
    fake = FakeMatcher(ANSWERS, alt={"Q:7": ["v5"]}, fail_on=["c"])
    report = NormalizationEvaluator(mentions()).evaluate(fake)
    assert report.metrics["normalize_n_failed"] == 1
    assert report.metrics["normalize_acc@1"] == pytest.approx(2 / 4)
    failed = report.results[2]
    assert failed.error == "QueryError: cannot embed this text" and failed.candidates == ()


def test_a_matcher_that_refuses_everything_raises() -> None:
    fake = FakeMatcher({}, fail_on=["a"])
    with pytest.raises(QueryError, match="cannot embed"):
        NormalizationEvaluator([make_mention("a", "X1", "d")])(fake)


def test_other_matcher_errors_are_not_swallowed() -> None:
    fake = FakeMatcher(ANSWERS, fail_on=["c"], error=RuntimeError)
    with pytest.raises(RuntimeError, match="cannot embed"):
        NormalizationEvaluator(mentions()).evaluate(fake)
    assert len(fake.calls) == 1  # no retry text by text


def test_a_matcher_returning_the_wrong_number_of_rows_is_refused() -> None:
    class Short(FakeMatcher):
        def normalize_batch(self, texts: Sequence[str], k: int = 5) -> list[list[Candidate]]:
            return []

    with pytest.raises(ValueError, match="returned 0 rows for 1 texts"):
        NormalizationEvaluator([make_mention("a", "X1", "d")])(Short({}))


def test_predictions_dump(matcher: FakeMatcher, tmp_path: Path) -> None:
    report = NormalizationEvaluator(mentions()).evaluate(matcher)
    path = report.write_predictions(tmp_path / "out" / "pred.jsonl")
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(rows) == 6
    assert rows[1]["rank"] == 3 and rows[1]["correct_at_1"] is False
    assert [p["correct"] for p in rows[1]["predictions"]] == [False, False, True]
    assert rows[4]["parts"] == ["e cancer", "f cancer"] and rows[4]["part_ranks"] == [1, 3]
    assert rows[5]["kind"] == "unlinkable" and rows[5]["rank"] is None


def test_no_simple_mention_is_an_error() -> None:
    with pytest.raises(EmptyResultError, match="no simple mention"):
        NormalizationEvaluator([make_mention("x", "-1", "d")])


def test_ks_must_be_positive() -> None:
    with pytest.raises(ValueError, match="ks must be positive"):
        NormalizationEvaluator(mentions(), ks=(0, 1))


def test_fake_is_a_matcher(matcher: FakeMatcher) -> None:
    assert isinstance(matcher, Matcher)


def test_rank_metrics_formula() -> None:
    assert rank_metrics([1, 2, None, 4], (1, 2), "p_") == {
        "p_acc@1": 0.25,
        "p_acc@2": 0.5,
        "p_mrr": pytest.approx((1 + 0.5 + 0.25) / 4),
    }


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        ("breast and ovarian cancer", ("breast cancer", "ovarian cancer")),
        (
            "brain, breast, and prostate cancer",
            ("brain cancer", "breast cancer", "prostate cancer"),
        ),
        (
            "breast, ovarian, or other cancers",
            ("breast cancers", "ovarian cancers", "other cancers"),
        ),
        ("C6 or C7 deficiency", ("C6 deficiency", "C7 deficiency")),
        ("deficiency of C6 and C7", ("deficiency of C6", "deficiency of C7")),
        ("breast and/or ovarian cancer", ("breast cancer", "ovarian cancer")),
        ("cholestatic hepatitis", ("cholestatic hepatitis",)),
        ("HPRT-APRT-deficient", ("HPRT-APRT-deficient",)),
    ],
)
def test_split_composite(text: str, parts: tuple[str, ...]) -> None:
    assert split_composite(text) == parts
