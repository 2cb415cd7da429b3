"""Hybrid recall: dense and sparse (char 3-gram TF-IDF) candidates merged into one list."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from _search_fakes import TABLE, DictEncoder, build_index, unit
from termnorm.errors import ArtifactMismatchError
from termnorm.search.candidate import Candidate
from termnorm.search.domain import SearchSpace
from termnorm.search.lexical import TfidfMatcher
from termnorm.search.space_matcher import build_strategy
from termnorm.search.stages.hybrid.card import load_hybrid
from termnorm.search.stages.hybrid.fit import fit_weight
from termnorm.search.stages.hybrid.matcher import (
    HybridConfig,
    HybridMatcher,
    ScoredCandidates,
    space_kg,
)

# "neuroblastoma" sits far from the query "neuroblastomas" in the (made-up) dense space, so the
# dense side never ranks it in its top 2; its character 3-grams give it away to the sparse side.
HYBRID_TABLE = {
    **TABLE,
    "neuroblastoma": unit(-1, -1, 0.2),
    "neuroblastomas": unit(1, 0.2, 0.1),
    "betas": unit(0, 1, 0),
}


def _space() -> SearchSpace:
    encoder = DictEncoder(HYBRID_TABLE)
    concepts = [
        ("X:1", "alpha", ["Finding"], []),
        ("X:2", "beta", ["Finding"], []),
        ("X:3", "gamma", ["Disease"], []),
        ("X:4", "neuroblastoma", ["Disease"], []),
    ]
    terms = [("X:1", "alpha"), ("X:2", "beta"), ("X:3", "gamma"), ("X:4", "neuroblastoma")]
    return SearchSpace(build_index(concepts, terms, encoder), encoder)


def test_hybrid_returns_a_candidate_only_the_sparse_side_finds() -> None:
    space = _space()
    dense = build_strategy(space, "o-t")
    assert "X:4" not in [c.concept_id for c in dense.normalize("neuroblastomas", k=2)]
    hybrid = HybridMatcher(dense, HybridConfig(weight=0.5, k_dense=2, k_sparse=2))
    found = {c.concept_id: c for c in hybrid.normalize("neuroblastomas", k=3)}
    assert "X:4" in found
    cand = found["X:4"]
    # its dense score is the cosine of its own text, computed although dense missed it
    cosine = float(unit(-1, -1, 0.2) @ unit(1, 0.2, 0.1))
    assert cand.recall_score == pytest.approx(cosine, abs=1e-3)  # stored rounded
    sparse = float(TfidfMatcher(space_kg(space)).concept_scores("neuroblastomas", ["X:4"])[0])
    assert sparse > 0.5
    assert cand.score == pytest.approx(0.5 * cand.recall_score + 0.5 * sparse, abs=1e-6)
    assert cand.matched_term == "neuroblastoma" and cand.source == "ontology"


def test_hybrid_weight_orders_the_merged_list() -> None:
    dense = build_strategy(_space(), "o-t")
    hybrid = HybridMatcher(dense, HybridConfig(weight=1.0, k_dense=2, k_sparse=2))
    assert hybrid.normalize("neuroblastomas", k=1)[0].concept_id == "X:1"  # dense alone
    sparse_led = HybridMatcher(
        dense, HybridConfig(weight=0.2, k_dense=2, k_sparse=2), hybrid.sparse
    )
    assert sparse_led.normalize("neuroblastomas", k=1)[0].concept_id == "X:4"
    ranks = [c.rank for c in sparse_led.normalize("neuroblastomas", k=3)]
    assert ranks == [1, 2, 3]


def test_hybrid_sparse_side_sees_domain_synonyms() -> None:
    space, _report = _space().with_synonyms([("betas", ("X:2",))])
    hybrid = HybridMatcher(build_strategy(space, "d-t+od-t"), HybridConfig(weight=0.0))
    scored = hybrid.scored(["betas"])[0]
    i = [c.concept_id for c in scored.candidates].index("X:2")
    assert scored.sparse[i] == pytest.approx(1.0, abs=1e-6)  # the synonym's own text


def test_hybrid_min_score_applies_to_the_hybrid_score() -> None:
    dense = build_strategy(_space(), "o-t").configure(min_score=0.99)
    hybrid = HybridMatcher(dense, HybridConfig(weight=0.5, k_dense=2, k_sparse=2))
    (row,) = hybrid.normalize_rows(["neuroblastomas"], k=3)
    assert row.candidates == [] and row.abstained == "no concept scored >= 0.99"
    (bad,) = hybrid.normalize_rows([""], k=3)
    assert bad.error is not None


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"weight": 1.5}, r"hybrid weight must be in \[0, 1\]"),
        ({"weight": 0.5, "k_sparse": 0}, "k_dense and k_sparse must be >= 1"),
    ],
)
def test_hybrid_config_errors(kwargs: dict[str, float], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        HybridConfig(**kwargs)  # type: ignore[arg-type]


def test_hybrid_refuses_concept_vectors() -> None:
    with pytest.raises(ValueError, match="hybrid recall needs a term strategy"):
        HybridMatcher(build_strategy(_space(), "o-c"), HybridConfig(weight=0.5))


def test_concept_scores_is_the_best_term() -> None:
    space = _space()
    tfidf = TfidfMatcher(space_kg(space))
    scores = tfidf.concept_scores("beta", ["X:2", "X:1", "NOPE:1"])
    assert scores[0] == pytest.approx(1.0, abs=1e-6)
    assert scores[2] == 0.0
    top = tfidf.normalize_batch(["beta"], k=1)[0][0]
    assert np.isclose(top.score, scores[0])


def _scored(ids: list[str], dense: list[float], sparse: list[float]) -> ScoredCandidates:
    cands = [
        Candidate(c, c.lower(), d, c.lower() + " x", i + 1)
        for i, (c, d) in enumerate(zip(ids, dense, strict=True))
    ]
    return ScoredCandidates(cands, np.array(dense), np.array(sparse))


def test_fit_weight_picks_the_best_training_accuracy_and_prefers_dense_on_ties() -> None:
    # q1: A ahead iff 0.1w > 0.1(1-w) iff w > 0.5 (a tie at 0.5 goes to A, the smaller ID);
    # q2: A ahead iff 0.4w > 0.2(1-w) iff w > 1/3. acc@1 = 1 on [0.34, 0.48]: the largest wins.
    scored = [
        _scored(["A", "B"], [0.9, 0.8], [0.2, 0.3]),
        _scored(["A", "B"], [0.9, 0.5], [0.4, 0.6]),
    ]
    hits = [[False, True], [True, False]]
    weight, acc = fit_weight(scored, hits)
    assert weight == 0.48
    assert acc[0.34] == acc[0.48] == 1.0 and acc[0.5] == acc[1.0] == acc[0.0] == 0.5
    with pytest.raises(ValueError, match="no training query"):
        fit_weight([], [])


def test_load_hybrid_refuses_another_index(tmp_path: Path) -> None:
    card = tmp_path / "h.json"
    card.write_text(
        json.dumps(
            {
                "kind": "hybrid-recall",
                "weight": 0.5,
                "k_dense": 2,
                "k_sparse": 2,
                "strategy": "o-t",
                "index": {"kg_fingerprint": "nope", "model_fingerprint": "x", "pooling": "mean"},
            }
        )
    )
    dense = build_strategy(_space(), "o-t")
    with pytest.raises(ArtifactMismatchError, match="fit it again with 'termnorm rank hybrid"):
        load_hybrid(card, dense)
    card.write_text(json.dumps({"kind": "kar"}))
    with pytest.raises(ArtifactMismatchError, match="is not a hybrid-recall card"):
        load_hybrid(card, dense)


def test_hybrid_ties_keep_the_dense_order() -> None:
    # the sieve put the domain synonym's concept first; an ontology name ties with it at h = 1
    scored = _scored(["D:9", "A:1"], [1.0, 1.0], [1.0, 1.0])
    scored.candidates[1] = scored.candidates[1]._replace(matched_term="a:1")  # at its name
    assert scored.order(0.66).tolist() == [0, 1]


def test_an_ontology_strategy_ignores_domain_synonyms_on_both_sides() -> None:
    space, _report = _space().with_synonyms([("betas", ("X:2",))])
    hybrid = HybridMatcher(build_strategy(space, "o-t"), HybridConfig(weight=0.0))
    scored = hybrid.scored(["betas"])[0]
    i = [c.concept_id for c in scored.candidates].index("X:2")
    assert scored.sparse[i] < 1.0 and scored.candidates[i].source == "ontology"
