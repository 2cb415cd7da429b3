"""Search modules O/D/OD × T/C on vectors built so the right answer is known in advance."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from _index_fakes import TABLE as INDEX_TABLE
from _index_fakes import KeyedEncoder, e, known_kg
from _search_fakes import DOMAIN_TEXT, TABLE, DictEncoder, make_space, unit
from termnorm.errors import EmptyResultError
from termnorm.index import TermIndex
from termnorm.search import Matcher
from termnorm.search.domain import SearchSpace, TextVectors, concept_means
from termnorm.search.sieve import build_strategy
from termnorm.search.strategies import (
    PAPER_SIEVES,
    PAPER_STRATEGIES,
    ModuleSpec,
    Representation,
    Target,
    parse_strategy,
    rank_candidates,
)


def top(matcher: Matcher, text: str, k: int = 1) -> list[str]:
    return [c.concept_id for c in matcher.normalize_batch([text], k=k)[0]]


@pytest.fixture()
def space() -> SearchSpace:
    base = make_space()
    with_d, _report = base.with_synonyms([(DOMAIN_TEXT, ("2",))])
    return with_d


# ----------------------------------------------------------------------------- parsing
def test_paper_strategies_are_the_fourteen_of_table_4() -> None:
    assert [str(s) for s in PAPER_STRATEGIES] == [
        "o-t", "o-c", "d-t", "d-c", "od-t", "od-c",
        "d-t+o-t", "d-t+o-c", "d-c+o-t", "d-c+o-c",
        "d-t+od-t", "d-t+od-c", "d-c+od-t", "d-c+od-c",
    ]  # fmt: skip
    assert all(s.is_sieve and s.needs_domain for s in PAPER_SIEVES)


def test_parse_strategy_is_case_and_space_insensitive() -> None:
    spec = parse_strategy(" D-T + OD-C ")
    assert spec.first == ModuleSpec(Target.D, Representation.T)
    assert spec.second == ModuleSpec(Target.OD, Representation.C)
    assert str(spec) == "d-t+od-c"
    assert not parse_strategy("o-t").needs_domain


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("", "empty search strategy"),
        ("x-t", r"unknown search module 'x-t' in strategy 'x-t'"),
        ("o-q", r"unknown search module 'o-q'"),
        ("ot", r"unknown search module 'ot'"),
        ("d-t+od", r"unknown search module 'od' in strategy 'd-t\+od'"),
        ("o-t+o-c+d-t", r"a sieve has two modules \(first\+second\), got 3"),
        ("o-t+O-T", "uses the same module twice"),
    ],
)
def test_parse_strategy_errors(text: str, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        parse_strategy(text)


# ----------------------------------------------------------------------------- modules
def test_strategies_are_matchers(space: SearchSpace) -> None:
    for spec in PAPER_STRATEGIES:
        matcher = build_strategy(space, spec)
        assert isinstance(matcher, Matcher)
        assert matcher.name == str(spec)
        assert matcher.alt_ids("X:3") == ("OTHER:33",)


def test_o_t_ranks_concepts_once_at_their_best_text(space: SearchSpace) -> None:
    cands = build_strategy(space, "o-t").normalize_batch(["q_alpha"], k=3)[0]
    assert [c.concept_id for c in cands] == ["X:1", "X:2", "X:3"]
    assert cands[0].matched_term == "alpha" and cands[0].name == "alpha"
    assert [c.rank for c in cands] == [1, 2, 3]
    assert cands[0].score == pytest.approx(float(unit(0.99, 0.1, 0) @ unit(1, 0, 0)))


def test_t_and_c_differ_where_the_mean_moves_the_concept(space: SearchSpace) -> None:
    # q_dx is nearest to gamma (0.8) among ontology texts; alpha's mean (0.9, 0.3, 0)
    # scores 0.6 · 0.949 = 0.569 < 0.8
    assert top(build_strategy(space, "o-t"), "q_dx") == ["X:3"]
    assert top(build_strategy(space, "o-c"), "q_dx") == ["X:3"]
    ids, means = space.concept_rows(Target.O)
    assert ids == ("X:1", "X:2", "X:3")
    np.testing.assert_allclose(means[0], unit(0.9, 0.3, 0), atol=1e-6)


def test_d_targets_search_only_the_domain_synonyms(space: SearchSpace) -> None:
    assert top(build_strategy(space, "d-t"), "q_gamma", k=5) == ["X:2"]
    assert top(build_strategy(space, "d-c"), "q_gamma", k=5) == ["X:2"]


def test_od_t_searches_both_and_od_c_averages_both(space: SearchSpace) -> None:
    # dx (X:2) equals q_dx exactly: OD-T answers X:2 where O-T said X:3
    cands = build_strategy(space, "od-t").normalize_batch(["q_dx"], k=3)[0]
    assert [c.concept_id for c in cands] == ["X:2", "X:3", "X:1"]
    assert cands[0].matched_term == DOMAIN_TEXT
    ids, means = space.concept_rows(Target.OD)
    np.testing.assert_allclose(means[ids.index("X:2")], unit(0.6, 1, 0.8), atol=1e-6)
    o_ids, o_means = space.concept_rows(Target.O)
    np.testing.assert_array_equal(means[ids.index("X:1")], o_means[o_ids.index("X:1")])
    # OD-C: X:2's mean (0.6, 1, 0.8)/1.41 scores 1/1.414 = 0.707 < gamma's 0.8
    assert top(build_strategy(space, "od-c"), "q_dx") == ["X:3"]


def test_domain_targets_without_synonyms_are_refused() -> None:
    bare = make_space()
    for name in ("d-t", "od-c", "d-t+od-t"):
        with pytest.raises(EmptyResultError, match="needs domain synonyms"):
            build_strategy(bare, name)


# ----------------------------------------------------------------------------- synonyms
def test_synonyms_are_added_without_re_encoding_the_ontology() -> None:
    encoder = DictEncoder(TABLE)
    base = make_space(encoder)
    onto_vectors = base.ontology.vectors
    before = onto_vectors.copy()
    space, report = base.with_synonyms(
        [(DOMAIN_TEXT, ("X:2",)), (DOMAIN_TEXT, ("X:2",)), ("d2", ("OTHER:33",))]
    )
    assert encoder.calls == [[DOMAIN_TEXT, "d2"]]  # only the new texts, each once
    assert space.ontology is base.ontology and space.ontology.vectors is onto_vectors
    np.testing.assert_array_equal(onto_vectors, before)
    assert report.kept == 2 and report.encoded_texts == 2
    assert report.dropped["duplicate"] == 1
    assert space.domain is not None and space.domain.concept_ids == ("X:2", "X:3")  # alt ID
    # the domain synonym changes the answer of OD-T without touching the ontology
    assert top(build_strategy(base, "o-t"), "q_dx") == ["X:3"]
    assert top(build_strategy(space, "od-t"), "q_dx") == ["X:2"]
    # adding more encodes only what is new
    encoder.calls.clear()
    again, report2 = space.with_synonyms([("d2", ("X:3",)), ("beta", ("X:1",))])
    assert encoder.calls == [["beta"]] and report2.kept == 1
    assert again.domain is not None and len(again.domain) == 3


def test_unusable_synonyms_are_counted_by_reason() -> None:
    _space, report = make_space().with_synonyms(
        [
            ("dx", ("X:2",)),
            ("both", ("X:1", "X:2")),
            ("none", ("-1",)),
            ("lost", ("X:99",)),
            (" ", ("X:1",)),
        ]
    )
    assert report.read == 5 and report.kept == 1
    assert dict(report.dropped) == {
        "composite (several IDs)": 1,
        "unlinkable": 1,
        "concept not in the index": 1,
        "empty text": 1,
    }
    with pytest.raises(EmptyResultError, match="no usable domain synonym among 1 read"):
        make_space().with_synonyms([("lost", ("X:99",))])


# ----------------------------------------------------------------------------- ties
def test_ties_between_concepts_sharing_a_text_go_to_the_smaller_id() -> None:
    shared = unit(1, 1, 0)
    # the same text in three concepts, listed in reverse ID order, vectors equal up to 1e-8
    onto = TextVectors(
        ("shared", "shared", "shared", "other"),
        ("Y:9", "Y:10", "Y:2", "Y:5"),
        np.stack([shared, shared + 1e-8, shared, unit(0, 0, 1)]),
    )
    names = {c: c for c in onto.concept_ids}
    encoder = DictEncoder({"q": shared})
    sp = SearchSpace(onto, names, {}, encoder)
    for name in ("o-t", "o-c"):
        assert top(build_strategy(sp, name), "q", k=3) == ["Y:10", "Y:2", "Y:9"]
    # row order does not matter
    rev = TextVectors(onto.texts[::-1], onto.concept_ids[::-1], onto.vectors[::-1].copy())
    sp2 = SearchSpace(rev, names, {}, encoder)
    assert top(build_strategy(sp2, "o-t"), "q", k=3) == ["Y:10", "Y:2", "Y:9"]


def test_a_tie_goes_first_to_the_concept_named_by_the_text() -> None:
    shared = unit(1, 1, 0)
    onto = TextVectors(("ANIRIDIA", "Aniridia"), ("Y:1", "Y:2"), np.stack([shared, shared]))
    names = {"Y:1": "Aniridia, type 2", "Y:2": "Aniridia"}
    sp = SearchSpace(onto, names, {}, DictEncoder({"q": shared}))
    assert top(build_strategy(sp, "o-t"), "q", k=2) == ["Y:2", "Y:1"]
    best = {"Y:1": (0.9, "ANIRIDIA"), "Y:2": (0.9 + 1e-9, "aniridia"), "Y:0": (0.8, "x")}
    assert [c.concept_id for c in rank_candidates(best, names, 3)] == ["Y:2", "Y:1", "Y:0"]


def test_concept_means_over_several_parts() -> None:
    a = TextVectors(("a",), ("C",), unit(1, 0)[None, :])
    b = TextVectors(("b", "c"), ("C", "D"), np.stack([unit(0, 1), unit(1, 1)]))
    ids, means = concept_means([a, b])
    assert ids == ("C", "D")
    np.testing.assert_allclose(means, np.stack([unit(1, 1), unit(1, 1)]), atol=1e-6)


def test_a_saved_index_gets_synonyms_without_re_encoding(tmp_path: Path) -> None:
    encoder = KeyedEncoder({**INDEX_TABLE, "dom": e(2), "q dom": e(2)})
    TermIndex.build(known_kg(), encoder, backend="exact", show_progress=False).save(tmp_path)
    index = TermIndex.load(tmp_path)
    before = np.array(index.term_vectors)
    encoder.calls.clear()
    space, report = SearchSpace.from_index(index, encoder).with_synonyms([("dom", ("B:2",))])
    assert encoder.calls == [["dom"]] and report.kept == 1
    assert space.ontology.vectors is index.term_vectors
    np.testing.assert_array_equal(np.asarray(index.term_vectors), before)
    # "q dom" equals gamma's vector and the new synonym of B:2: B:2 < C:3, a tie at cos 1
    assert top(build_strategy(space, "o-t"), "q dom") == ["C:3"]
    assert top(build_strategy(space, "d-t+od-t"), "q dom", k=2) == ["B:2", "C:3"]
    assert build_strategy(space, "o-t").alt_ids("C:3") == ("OMIM:333",)
    # OMIM:333 resolves to C:3 through its alt ID
    _, report2 = space.with_synonyms([("gamma alias", ("333",))])
    assert report2.kept == 1
