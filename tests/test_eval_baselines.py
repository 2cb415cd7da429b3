"""Lexical baselines (exact, char 3-gram TF-IDF, edit distance) as Matchers on the tiny KG."""

from __future__ import annotations

import itertools

import pytest

from termnorm.errors import EmptyResultError
from termnorm.evaluation.normalization import NormalizationEvaluator
from termnorm.kg import KnowledgeGraph
from termnorm.mentions import make_mention
from termnorm.search.candidate import Matcher
from termnorm.search.lexical import (
    EditDistanceMatcher,
    ExactMatcher,
    LexicalKind,
    TermDictionary,
    TfidfMatcher,
    make_lexical_matcher,
    normalize_text,
)


def twin_kg() -> KnowledgeGraph:
    """Two concepts sharing the term "cold" (a tie), one with an alternative ID."""
    concepts = [
        {"concept_id": "Z:2", "name": "common cold", "alt_ids": ["OMIM:999"]},
        {"concept_id": "Z:1", "name": "cold sensation"},
        {"concept_id": "Z:3", "name": "fever"},
    ]
    terms = [
        {"concept_id": "Z:2", "term": "common cold", "is_preferred": True},
        {"concept_id": "Z:2", "term": "Cold", "is_preferred": False},
        {"concept_id": "Z:1", "term": "cold sensation", "is_preferred": True},
        {"concept_id": "Z:1", "term": "cold", "is_preferred": False},
        {"concept_id": "Z:3", "term": "fever", "is_preferred": True},
        {"concept_id": "Z:3", "term": "--", "is_preferred": False},
    ]
    return KnowledgeGraph.from_records(concepts, terms)


def test_normalize_text() -> None:
    assert normalize_text("  Breast-Cancer , (BRCA1)_x ") == "breast cancer brca1 x"
    assert normalize_text("ＭＩ") == "mi"  # NFKC folds full-width letters


def test_dictionary_groups_terms_by_concept_in_id_order() -> None:
    d = TermDictionary.from_kg(twin_kg())
    assert d.concept_ids == ["Z:1", "Z:2", "Z:3"]
    assert d.terms == ["cold sensation", "cold", "common cold", "Cold", "fever"]  # "--" dropped
    assert d.starts.tolist() == [0, 2, 4]
    assert d.alt_ids == {"Z:2": ("OMIM:999",)}


@pytest.mark.parametrize("kind", list(LexicalKind))
def test_every_baseline_is_a_matcher_with_deduplicated_concepts(
    kind: LexicalKind, tiny_kg: KnowledgeGraph
) -> None:
    matcher = make_lexical_matcher(kind, tiny_kg)
    assert isinstance(matcher, Matcher) and matcher.name == kind.value
    (row,) = matcher.normalize_batch(["heart attack"], k=4)
    assert row[0].concept_id == "T:0001" and row[0].matched_term == "heart attack"
    assert row[0].score == pytest.approx(1.0) and row[0].rank == 1
    ids = [c.concept_id for c in row]
    assert len(ids) == len(set(ids)) <= 4
    assert [c.rank for c in row] == list(range(1, len(row) + 1))
    assert all(a.score >= b.score for a, b in itertools.pairwise(row))


def test_exact_ignores_case_space_and_punctuation(tiny_kg: KnowledgeGraph) -> None:
    matcher = ExactMatcher(tiny_kg)
    rows = matcher.normalize_batch(["  High-Blood   PRESSURE ", "heart attacks", ""], k=5)
    assert [c.concept_id for c in rows[0]] == ["T:0002"]
    assert rows[0][0].name == "hypertension" and rows[0][0].matched_term == "high blood pressure"
    assert rows[1] == [] and rows[2] == []


def test_ties_go_to_the_smaller_concept_id() -> None:
    kg = twin_kg()
    for matcher in (ExactMatcher(kg), TfidfMatcher(kg), EditDistanceMatcher(kg)):
        row = matcher.normalize_batch(["COLD"], k=2)[0]
        assert [c.concept_id for c in row] == ["Z:1", "Z:2"], matcher.name
        assert row[1].matched_term == "Cold"


def test_ties_go_first_to_a_match_on_a_preferred_name() -> None:
    kg = KnowledgeGraph.from_records(
        [
            {"concept_id": "A:1", "name": "aniridia type 2"},
            {"concept_id": "A:2", "name": "aniridia"},
        ],
        [
            {"concept_id": "A:1", "term": "aniridia type 2", "is_preferred": True},
            {"concept_id": "A:1", "term": "ANIRIDIA", "is_preferred": False},
            {"concept_id": "A:2", "term": "Aniridia", "is_preferred": True},
        ],
    )
    for matcher in (ExactMatcher(kg), TfidfMatcher(kg), EditDistanceMatcher(kg)):
        row = matcher.normalize_batch(["aniridia"], k=2)[0]
        assert [c.concept_id for c in row][:2] == ["A:2", "A:1"], matcher.name


def test_k_limits_and_zero_scores_are_dropped(tiny_kg: KnowledgeGraph) -> None:
    tfidf = TfidfMatcher(tiny_kg)
    assert len(tfidf.normalize_batch(["disease"], k=2)[0]) == 2
    assert tfidf.normalize_batch(["zzzzqqq"], k=5) == [[]]  # no shared 3-gram


def test_tfidf_and_edit_tolerate_typos(tiny_kg: KnowledgeGraph) -> None:
    for matcher in (TfidfMatcher(tiny_kg), EditDistanceMatcher(tiny_kg)):
        rows = matcher.normalize_batch(["hypertensoin", "asthmaa", "pnemonia"], k=3)
        assert [r[0].concept_id for r in rows] == ["T:0002", "T:0004", "T:0006"], matcher.name


def test_edit_score_is_normalized_levenshtein(tiny_kg: KnowledgeGraph) -> None:
    (row,) = EditDistanceMatcher(tiny_kg).normalize_batch(["asthmaa"], k=1)
    assert row[0].score == pytest.approx(1 - 1 / 7)  # one insertion, longer string has 7 chars


def test_blocks_give_the_same_answers(tiny_kg: KnowledgeGraph) -> None:
    queries = ["heart attack", "lung infection", "sugar", "anaemia", "thyroid"]
    for cls in (TfidfMatcher, EditDistanceMatcher):
        one_at_a_time = cls(tiny_kg, block_cells=1)
        assert one_at_a_time.block_size == 1
        assert one_at_a_time.normalize_batch(queries, k=3) == cls(tiny_kg).normalize_batch(
            queries, k=3
        )


def test_alt_ids_come_from_the_kg_and_count_in_evaluation() -> None:
    matcher = ExactMatcher(twin_kg())
    assert list(matcher.alt_ids("Z:2")) == ["OMIM:999"] and list(matcher.alt_ids("Z:3")) == []
    mentions = [make_mention("common cold", "999", "d"), make_mention("fever", "mesh:3", "d")]
    metrics = NormalizationEvaluator(mentions, ks=(1,))(matcher)
    assert metrics["normalize_acc@1"] == 1.0


def test_baselines_side_by_side_on_known_mentions(tiny_kg: KnowledgeGraph) -> None:
    mentions = [
        make_mention("Heart Attack", "0001", "d"),  # exact hit
        make_mention("diabetis", "0003", "d"),  # typo: exact misses
        make_mention("asthmatic diseases", "0004", "d"),  # plural: exact misses
    ]
    evaluator = NormalizationEvaluator(mentions, ks=(1,))
    assert evaluator(ExactMatcher(tiny_kg))["normalize_acc@1"] == pytest.approx(1 / 3)
    assert evaluator(TfidfMatcher(tiny_kg))["normalize_acc@1"] == 1.0
    assert evaluator(EditDistanceMatcher(tiny_kg))["normalize_acc@1"] == 1.0


def test_kg_without_terms_is_an_error() -> None:
    kg = KnowledgeGraph.from_records(
        [{"concept_id": "Z:1", "name": "x"}], [{"concept_id": "Z:1", "term": "!!"}]
    )
    with pytest.raises(EmptyResultError, match="no term to match"):
        ExactMatcher(kg)


def test_unknown_kind() -> None:
    with pytest.raises(ValueError, match="'bm25' is not a valid LexicalKind"):
        make_lexical_matcher("bm25", twin_kg())
