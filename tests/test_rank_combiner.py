"""The learned combiner: calibrated probabilities, and deference to recall when a feature is noise."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from _recall_fakes import ListRecall
from termnorm.errors import ArtifactMismatchError
from termnorm.kg.graph import KnowledgeGraph
from termnorm.search.candidate import Candidate, Source
from termnorm.search.lexical import TfidfMatcher
from termnorm.search.stages.combiner.calibration import expected_calibration_error, reliability_bins
from termnorm.search.stages.combiner.card import load_combined
from termnorm.search.stages.combiner.matcher import CombinedMatcher
from termnorm.search.stages.combiner.model import (
    BASE_FEATURES,
    FEATURES,
    Combiner,
    candidate_features,
    fit_combiner,
)


def sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-z))


# ----------------------------------------------------------------------------- ECE
def test_ece_on_hand_made_bins() -> None:
    # bin [0.2, 0.3): p 0.25 twice, one right -> |0.5 - 0.25| = 0.25, weight 2/4
    # bin [0.9, 1.0]: p 0.9 and 1.0, both right -> |1 - 0.95| = 0.05, weight 2/4
    p = np.array([0.25, 0.25, 0.9, 1.0])
    y = np.array([1, 0, 1, 1])
    assert expected_calibration_error(p, y) == pytest.approx(0.5 * 0.25 + 0.5 * 0.05)
    bins = reliability_bins(p, y)
    assert [(b.low, b.n) for b in bins] == [(0.2, 2), (0.9, 2)]
    assert expected_calibration_error(np.array([]), np.array([])) == 0.0
    with pytest.raises(ValueError, match="probabilities must lie in"):
        reliability_bins(np.array([1.5]), np.array([1]))
    with pytest.raises(ValueError, match="2 probabilities but 1 outcomes"):
        reliability_bins(np.array([0.1, 0.2]), np.array([1]))


def test_combiner_is_calibrated_on_a_synthetic_set_with_known_probabilities() -> None:
    rng = np.random.default_rng(0)
    n = 20_000
    x = rng.normal(size=(n, 3))
    true_p = sigmoid(-0.5 + 2.0 * x[:, 0] - 1.0 * x[:, 1])  # x[:, 2] carries nothing
    y = rng.random(n) < true_p
    combiner = fit_combiner(x, y, ("a", "b", "noise"))
    x_test = rng.normal(size=(n, 3))
    p_test = sigmoid(-0.5 + 2.0 * x_test[:, 0] - 1.0 * x_test[:, 1])
    predicted = combiner.predict(x_test)
    assert np.abs(predicted - p_test).mean() < 0.02
    assert expected_calibration_error(predicted, rng.random(n) < p_test) < 0.03
    assert abs(combiner.coef[2]) < 0.05 * abs(combiner.coef[0])


def test_combiner_round_trips_through_its_card_and_refuses_one_class() -> None:
    rng = np.random.default_rng(1)
    x = rng.normal(size=(200, 2))
    combiner = fit_combiner(x, x[:, 0] > 0, ("a", "b"))
    again = Combiner.from_dict(json.loads(json.dumps(combiner.to_dict())))
    assert np.allclose(again.predict(x), combiner.predict(x))
    with pytest.raises(ValueError, match="both correct and wrong"):
        fit_combiner(x, np.zeros(200), ("a", "b"))
    with pytest.raises(ValueError, match="3 features, the combiner has 2"):
        combiner.predict(np.zeros((1, 3)))


# ----------------------------------------------------------------------------- features
def _kg() -> KnowledgeGraph:
    return KnowledgeGraph.from_records(
        [{"concept_id": "C:1", "name": "heart attack"}, {"concept_id": "C:2", "name": "asthma"}],
        [
            {"concept_id": "C:1", "term": "heart attack", "is_preferred": True},
            {"concept_id": "C:2", "term": "asthma", "is_preferred": True},
        ],
    )


def test_candidate_features_by_name() -> None:
    cands = [
        Candidate("C:1", "heart attack", 0.9, "Heart-Attack", 1, is_preferred=True),
        Candidate("C:2", "asthma", 0.6, "asthmatic", 2, source=Source.DOMAIN.value),
    ]
    x = candidate_features("heart attack", cands, TfidfMatcher(_kg()), np.array([0.5, 0.9]))
    f = dict(zip(FEATURES, x.T, strict=True))
    assert f["recall_score"].tolist() == [0.9, 0.6] and f["cosine"].tolist() == [0.9, 0.6]
    assert f["gap_to_top"] == pytest.approx([0.0, 0.3])
    assert f["log_rank"] == pytest.approx([0.0, np.log(2)])
    assert f["domain"].tolist() == [0.0, 1.0] and f["preferred"].tolist() == [1.0, 0.0]
    assert f["exact"].tolist() == [1.0, 0.0] and f["token_overlap"].tolist() == [1.0, 0.0]
    assert f["tfidf"][0] == pytest.approx(1.0, abs=1e-6) and f["tfidf"][1] == 0.0
    assert f["ranker_logit"] == pytest.approx([0.0, np.log(9)])
    without = candidate_features("heart attack", cands, TfidfMatcher(_kg()))
    assert without.shape == (2, len(BASE_FEATURES))


# ----------------------------------------------------------------------------- deference
class NoiseRanker:
    """A ranker that knows nothing: uniform random probabilities."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def score_batch(
        self, mentions: Sequence[str], candidate_lists: Sequence[Sequence[Candidate]]
    ) -> list[np.ndarray]:
        return [self.rng.random(len(c)) for c in candidate_lists]


def _lists(
    rng: np.random.Generator, n: int, prefix: str
) -> tuple[dict[str, list[Candidate]], dict[str, str]]:
    """Queries with 10 candidates each in recall order; the gold is first for ~75 % of them."""
    lists, gold = {}, {}
    for q in range(n):
        scores = np.sort(rng.uniform(0.5, 0.95, size=10))[::-1]
        ids = [f"X:{q}-{i}" for i in range(10)]
        g = 0 if rng.random() < 0.75 else int(rng.integers(1, 10))
        text = f"{prefix}{q}"
        lists[text] = [
            Candidate(c, c, float(s), c, i + 1)
            for i, (c, s) in enumerate(zip(ids, scores, strict=True))
        ]
        gold[text] = ids[g]
    return lists, gold


def test_combiner_defers_to_recall_when_the_ranker_is_noise() -> None:
    rng = np.random.default_rng(7)
    tfidf = TfidfMatcher(_kg())
    train, train_gold = _lists(rng, 800, "train")
    ranker = NoiseRanker(1)
    texts = list(train)
    probs = ranker.score_batch(texts, [train[t] for t in texts])
    x = np.concatenate(
        [candidate_features(t, train[t], tfidf, p) for t, p in zip(texts, probs, strict=True)]
    )
    y = np.concatenate([[c.concept_id == train_gold[t] for c in train[t]] for t in texts])
    combiner = fit_combiner(x, y, FEATURES)

    test, test_gold = _lists(rng, 800, "test")
    matcher = CombinedMatcher(ListRecall(test), combiner, tfidf, k_c=10, ranker=NoiseRanker(2))
    queries = list(test)
    recall_right = np.array([test[q][0].concept_id == test_gold[q] for q in queries])
    combined = matcher.normalize_batch(queries, k=1)
    combined_right = np.array(
        [c[0].concept_id == test_gold[q] for q, c in zip(queries, combined, strict=True)]
    )
    lost = int(np.sum(recall_right & ~combined_right))
    gained = int(np.sum(~recall_right & combined_right))
    # a paired test: the combiner may not lose more than sampling error allows (McNemar, 2 sigma)
    assert lost - gained <= 2 * np.sqrt(max(1, lost + gained))
    assert combined[0][0].recall_score is not None and combined[0][0].ranker_score is not None
    assert 0.0 <= combined[0][0].score <= 1.0


def test_combined_matcher_min_probability_abstains() -> None:
    rng = np.random.default_rng(3)
    lists, gold = _lists(rng, 50, "q")
    x = np.concatenate([candidate_features(t, c, TfidfMatcher(_kg())) for t, c in lists.items()])
    y = np.concatenate([[c.concept_id == gold[t] for c in cs] for t, cs in lists.items()])
    combiner = fit_combiner(x, y, BASE_FEATURES)
    matcher = CombinedMatcher(
        ListRecall(lists), combiner, TfidfMatcher(_kg()), min_probability=0.9999
    )
    (row,) = matcher.normalize_rows(["q0"], k=3)
    assert row.candidates == [] and row.abstained == "no concept has probability >= 0.9999"
    with pytest.raises(ValueError, match="fitted with a ranker"):
        CombinedMatcher(
            ListRecall(lists), Combiner(FEATURES, *[np.zeros(10)] * 3, 0.0), TfidfMatcher(_kg())
        )


def test_load_combined_refuses_another_card(tmp_path: Path) -> None:
    card = tmp_path / "c.json"
    card.write_text(json.dumps({"kind": "hybrid-recall"}))
    with pytest.raises(ArtifactMismatchError, match="is not a combiner card"):
        load_combined(card, ListRecall({}))


class CarryingRanker(NoiseRanker):
    """A noise ranker whose folder carries a combiner (what ``rank train --holdout`` writes)."""

    name = "kar"
    path = None

    def __init__(self, seed: int, combiner: Combiner | None) -> None:
        super().__init__(seed)
        self.combiner = combiner
        self.card: dict[str, object] = {}


def test_ranked_matcher_learned_mode_is_the_combiners_order_and_threshold() -> None:
    from termnorm.search.stages.ranker.fusion import RankMode
    from termnorm.search.stages.ranker.matcher import RankedMatcher

    rng = np.random.default_rng(11)
    lists, gold = _lists(rng, 60, "q")
    tfidf = TfidfMatcher(_kg())
    texts = list(lists)
    probs = NoiseRanker(5).score_batch(texts, [lists[t] for t in texts])
    x = np.concatenate(
        [candidate_features(t, lists[t], tfidf, p) for t, p in zip(texts, probs, strict=True)]
    )
    y = np.concatenate([[c.concept_id == gold[t] for c in lists[t]] for t in texts])
    combiner = fit_combiner(x, y, FEATURES)
    carrying: Any = CarryingRanker(9, combiner)  # duck-typed as a Ranker
    learned = RankedMatcher(ListRecall(lists), carrying, tfidf=tfidf)
    assert learned.mode is RankMode.LEARNED and learned.name.endswith("[learned]")
    reference = CombinedMatcher(ListRecall(lists), combiner, tfidf, ranker=NoiseRanker(9))
    got, want = learned.normalize_rows(texts, k=4), reference.normalize_rows(texts, k=4)
    for a, b in zip(got, want, strict=True):
        assert [c.concept_id for c in a.candidates] == [c.concept_id for c in b.candidates]
        assert [c.score for c in a.candidates] == pytest.approx([c.score for c in b.candidates])
    carrying = CarryingRanker(9, combiner)
    strict = RankedMatcher(ListRecall(lists), carrying, tfidf=tfidf, min_probability=0.9999)
    (row,) = strict.normalize_rows(["q0"], k=3)
    assert row.candidates == [] and row.abstained == "no concept has probability >= 0.9999"
    bare: Any = CarryingRanker(9, None)
    fused = RankedMatcher(ListRecall(lists), bare)
    assert fused.mode is RankMode.FUSED  # no combiner in the folder: the paper's fusion
    with pytest.raises(ValueError, match="carries no learned combiner"):
        RankedMatcher(ListRecall(lists), bare, mode="learned")
    with pytest.raises(ValueError, match="needs the learned mode"):
        RankedMatcher(ListRecall(lists), bare, min_probability=0.5)
