"""Sieves: the first module's answer when its cosine ≥ the threshold, else the second's."""

from __future__ import annotations

import pytest

from _search_fakes import DOMAIN_TEXT, TABLE, DictEncoder, make_space
from termnorm.search.candidate import Candidate
from termnorm.search.sieve import sieve_merge
from termnorm.search.space_matcher import build_strategy


def cands(*pairs: tuple[str, float]) -> list[Candidate]:
    return [Candidate(cid, cid, s, cid, i) for i, (cid, s) in enumerate(pairs, start=1)]


def test_the_default_threshold_trusts_a_near_exact_first_answer_only() -> None:
    space, _ = make_space().with_synonyms([(DOMAIN_TEXT, ("X:2",))])
    sieve = build_strategy(space, "d-t+o-t")
    # q_dx equals dx (cos 1.0): trusted; q_gamma meets dx at cos 0.8: not trusted (O-T: X:3)
    assert [r[0].concept_id for r in sieve.normalize_batch(["q_dx", "q_gamma"], 1)] == [
        "X:2",
        "X:3",
    ]


def test_confident_first_answer_is_taken() -> None:
    space, _ = make_space().with_synonyms([(DOMAIN_TEXT, ("X:2",))])
    sieve = build_strategy(space, "d-t+o-t")
    assert sieve.config.strategy.is_sieve and sieve.name == "d-t+o-t"
    # q_dx equals the domain synonym of X:2 (cos 1.0 ≥ 0.95); O-T alone answers X:3
    out = sieve.normalize_batch(["q_dx"], k=3)[0]
    assert [c.concept_id for c in out] == ["X:2", "X:3", "X:1"]
    assert [c.rank for c in out] == [1, 2, 3]
    assert out[0].score == pytest.approx(1.0, abs=2**-11)  # float16 precision
    assert (out[0].source, out[1].source) == ("domain", "ontology")


def test_unconfident_first_answer_falls_through_to_the_second() -> None:
    space, _ = make_space().with_synonyms([(DOMAIN_TEXT, ("X:2",))])
    # q_gamma: D-T's best is X:2 at cos 0.8 < 0.95 → O-T's gamma (X:3)
    assert build_strategy(space, "d-t").normalize_batch(["q_gamma"], 1)[0][0].concept_id == "X:2"
    out = build_strategy(space, "d-t+o-t").normalize_batch(["q_gamma"], k=2)[0]
    assert [c.concept_id for c in out] == ["X:3", "X:1"]
    # the threshold is configurable: at 0.75 the same first answer is trusted
    low = build_strategy(space, "d-t+o-t", threshold=0.75)
    assert low.normalize_batch(["q_gamma"], 1)[0][0].concept_id == "X:2"
    assert build_strategy(space, "d-t+o-t").configure(threshold=0.75).normalize(
        "q_gamma", 1
    ) == low.normalize("q_gamma", 1)


def test_sieve_merge_keeps_confident_first_answers_then_the_second_ranking() -> None:
    first = cands(("A", 0.99), ("B", 0.96), ("C", 0.90))
    second = cands(("B", 0.97), ("D", 0.93), ("A", 0.80), ("E", 0.7))
    merged = sieve_merge(first, second, 0.95, k=4)
    assert [(c.concept_id, c.rank) for c in merged] == [("A", 1), ("B", 2), ("D", 3), ("E", 4)]
    assert sieve_merge(cands(("A", 0.949)), second, 0.95, k=2) == second[:2]
    assert sieve_merge([], second, 0.95, k=1) == second[:1]


def test_queries_are_encoded_once_for_both_modules() -> None:
    encoder = DictEncoder(TABLE)
    space, _ = make_space(encoder).with_synonyms([(DOMAIN_TEXT, ("X:2",))])
    encoder.calls.clear()
    build_strategy(space, "d-c+od-c").normalize_batch(["q_dx", "q_alpha"], k=2)
    assert encoder.calls == [["q_dx", "q_alpha"]]


def test_sieve_over_a_batch_mixes_both_outcomes() -> None:
    space, _ = make_space().with_synonyms([(DOMAIN_TEXT, ("X:2",))])
    sieve = build_strategy(space, "d-t+od-c")
    got = [r[0].concept_id for r in sieve.normalize_batch(["q_dx", "q_gamma", "q_alpha"], 1)]
    assert got == ["X:2", "X:3", "X:1"]
