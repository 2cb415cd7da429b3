"""A learned score never overrules an exact dictionary match or the document's short form."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from _recall_fakes import ListRecall
from termnorm.kg.graph import KnowledgeGraph
from termnorm.mentions.abbreviations import Expansion
from termnorm.search.candidate import Candidate
from termnorm.search.context import ContextMatcher, ExpansionChoice, recall_top
from termnorm.search.lexical import TfidfMatcher
from termnorm.search.stages.combiner.model import FEATURES, Combiner
from termnorm.search.stages.ranker.deference import defer_to_exact, is_exact_match
from termnorm.search.stages.ranker.matcher import RankedMatcher

# Concept A is named by the query; the ranker prefers B.
HEART = [
    Candidate("A", "Myocardial infarction", 1.0, "heart attack", 1),
    Candidate("B", "Heart arrest", 0.8, "heart arrest", 2),
    Candidate("C", "Heart failure", 0.7, "Heart failure", 3),
]
NEAR = [c._replace(score=s) for c, s in zip(HEART, (0.9, 0.8, 0.7), strict=True)]
NEAR[0] = NEAR[0]._replace(matched_term="attack of the heart")


class FixedRanker:
    """A ranker with set probabilities per concept (0.5 for any other); optionally carrying a
    combiner that follows the ranker's logit only."""

    name = "fixed-ranker"
    path = None

    def __init__(self, probs: dict[str, float], with_combiner: bool = False) -> None:
        self.probs = probs
        self.card: dict[str, object] = {}
        coef = np.array([float(n == "ranker_logit") for n in FEATURES])
        n = len(FEATURES)
        self.combiner = (
            Combiner(FEATURES, np.zeros(n), np.ones(n), coef, 0.0) if with_combiner else None
        )

    def score_batch(
        self, mentions: Sequence[str], candidate_lists: Sequence[Sequence[Candidate]]
    ) -> list[np.ndarray]:
        return [np.array([self.probs.get(c.concept_id, 0.5) for c in cs]) for cs in candidate_lists]


def _ranked(lists: dict[str, list[Candidate]], mode: str, probs: dict[str, float]) -> Any:
    ranker: Any = FixedRanker(probs, with_combiner=mode == "learned")
    kg = KnowledgeGraph.from_records(
        [{"concept_id": "A", "name": "Myocardial infarction"}],
        [{"concept_id": "A", "term": "heart attack", "is_preferred": False}],
    )
    return RankedMatcher(ListRecall(lists), ranker, k_c=3, mode=mode, tfidf=TfidfMatcher(kg))


@pytest.mark.parametrize("mode", ["learned", "fused", "rank"])
def test_the_ranker_never_overrules_an_exact_match(mode: str) -> None:
    matcher = _ranked({"Heart-Attack": HEART}, mode, {"A": 0.01, "B": 0.99, "C": 0.2})
    (row,) = matcher.normalize_rows(["Heart-Attack"], k=3)
    assert [c.concept_id for c in row.candidates] == ["A", "B", "C"]
    assert [c.rank for c in row.candidates] == [1, 2, 3]
    assert row.candidates[0].ranker_score == pytest.approx(0.01)  # its own learned score
    assert row.candidates[0].recall_score == 1.0


@pytest.mark.parametrize("mode", ["learned", "fused", "rank"])
def test_without_an_exact_match_the_learned_order_holds(mode: str) -> None:
    matcher = _ranked({"heart attack": NEAR}, mode, {"A": 0.01, "B": 0.99, "C": 0.2})
    (row,) = matcher.normalize_rows(["heart attack"], k=3)
    assert [c.concept_id for c in row.candidates] == ["B", "C", "A"]


def test_exact_match_is_on_normalized_text_of_the_matched_term_or_the_name() -> None:
    a = HEART[0]
    assert is_exact_match("  HEART attack!", a)
    assert is_exact_match("myocardial-infarction", a)
    assert not is_exact_match("heart attacks", a)
    assert not is_exact_match("--", a)  # nothing left after normalization
    ranked = [HEART[1], HEART[0], HEART[2]]
    moved, scores = defer_to_exact("heart attack", HEART, ranked, np.array([0.9, 0.5, 0.1]))
    assert [c.concept_id for c in moved] == ["A", "B", "C"]
    assert scores.tolist() == [0.5, 0.9, 0.1]
    kept, same = defer_to_exact("heart attacks", HEART, ranked, np.array([0.9, 0.5, 0.1]))
    assert [c.concept_id for c in kept] == ["B", "A", "C"] and same.tolist() == [0.9, 0.5, 0.1]


# "CD" is a dictionary name of celiac disease; its document defines it as Crohn disease.
SHORT = {
    "CD": [Candidate("CEL", "Celiac disease", 1.0, "CD", 1)],
    "Crohn disease": [Candidate("CRO", "Crohn disease", 1.0, "Crohn disease", 1)],
}


def test_the_ranker_never_overrules_the_documents_short_form() -> None:
    ranked = _ranked(SHORT, "rank", {"CEL": 0.99, "CRO": 0.4})
    expansion = Expansion("Crohn disease", "CD")
    (recall_row,) = ContextMatcher(ListRecall(SHORT)).normalize_expansions([expansion], k=1)
    assert recall_row.candidates[0].concept_id == "CRO"  # a tie goes to the document
    (row,) = ContextMatcher(ranked).normalize_expansions([expansion], k=1)
    assert row.candidates[0].concept_id == "CRO"
    assert row.candidates[0].expanded_from == "CD"


def test_rankings_are_compared_on_recall_scores() -> None:
    learned = Candidate("X", "x", 0.99, "x", 1, recall_score=0.7, ranker_score=0.99)
    recalled = Candidate("Y", "y", 0.6, "y", 1, recall_score=1.0, ranker_score=0.6)
    assert recall_top([learned]) == 0.7 and recall_top([learned, recalled]) == 1.0
    assert recall_top([Candidate("Z", "z", 0.8, "z", 1)]) == 0.8 and recall_top([]) is None
    assert ExpansionChoice().prefers_expanded([learned], [recalled])
    assert not ExpansionChoice().prefers_expanded([recalled], [learned])
