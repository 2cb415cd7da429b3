"""Search modules O/D/OD × T/C on vectors built so the right answer is known in advance."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from _index_fakes import TABLE as INDEX_TABLE
from _index_fakes import KeyedEncoder, e, known_kg
from _search_fakes import (
    DOMAIN_TEXT,
    TABLE,
    DictEncoder,
    build_index,
    make_space,
    unit,
)
from termnorm.errors import EmptyResultError
from termnorm.index import TermIndex
from termnorm.search import Matcher, RowMatcher, SearchSpace
from termnorm.search.space_matcher import build_strategy
from termnorm.search.strategies import (
    PAPER_SIEVES,
    PAPER_STRATEGIES,
    ModuleSpec,
    Representation,
    Target,
    parse_strategy,
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
        assert isinstance(matcher, RowMatcher) and isinstance(matcher, Matcher)
        assert matcher.name == str(spec)
        assert matcher.alt_ids("X:3") == ("OTHER:33",)


def test_o_t_ranks_concepts_once_at_their_best_text(space: SearchSpace) -> None:
    cands = build_strategy(space, "o-t").normalize_batch(["q_alpha"], k=3)[0]
    assert [c.concept_id for c in cands] == ["X:1", "X:2", "X:3"]
    assert cands[0].matched_term == "alpha" and cands[0].name == "alpha"
    assert [c.rank for c in cands] == [1, 2, 3]
    assert cands[0].score == pytest.approx(float(unit(0.99, 0.1, 0) @ unit(1, 0, 0)))


def test_o_c_searches_the_index_concept_vectors(space: SearchSpace) -> None:
    # q_dx is nearest to gamma (0.8) among ontology texts; alpha's mean (0.9, 0.3, 0)
    # scores 0.6 · 0.949 = 0.569 < 0.8
    assert top(build_strategy(space, "o-t"), "q_dx") == ["X:3"]
    cands = build_strategy(space, "o-c").normalize_batch(["q_alpha"], k=3)[0]
    alpha = space.index.concept_vectors[space.index.concept_row("X:1")]
    np.testing.assert_allclose(alpha, unit(0.9, 0.3, 0), atol=2**-11)  # stored as float16
    assert cands[0].concept_id == "X:1" and cands[0].matched_term == "alpha"
    assert cands[0].score == pytest.approx(float(unit(0.99, 0.1, 0) @ alpha), rel=1e-6)


def test_d_targets_search_only_the_domain_synonyms(space: SearchSpace) -> None:
    assert top(build_strategy(space, "d-t"), "q_gamma", k=5) == ["X:2"]
    assert top(build_strategy(space, "d-c"), "q_gamma", k=5) == ["X:2"]


def test_od_t_searches_both_and_od_c_averages_both(space: SearchSpace) -> None:
    # dx (X:2) equals q_dx exactly: OD-T answers X:2 where O-T said X:3
    cands = build_strategy(space, "od-t").normalize_batch(["q_dx"], k=3)[0]
    assert [c.concept_id for c in cands] == ["X:2", "X:3", "X:1"]
    assert cands[0].matched_term == DOMAIN_TEXT and cands[0].source == "domain"
    assert cands[1].source == "ontology"
    # OD-C: X:2's mean (0.6, 1, 0.8)/1.41 scores 1/1.414 = 0.707 < gamma's 0.8; X:1 keeps
    # its O-C vector (no domain synonym)
    od_c = build_strategy(space, "od-c").normalize_batch(["q_dx"], k=3)[0]
    assert [c.concept_id for c in od_c] == ["X:3", "X:2", "X:1"]
    assert od_c[1].score == pytest.approx(float(unit(0.6, 1, 0.8) @ TABLE["q_dx"]), abs=2**-11)
    assert od_c[1].source == "domain" and od_c[1].matched_term == "beta"
    o_c = {c.concept_id: c for c in build_strategy(space, "o-c").normalize("q_dx", k=3)}
    assert od_c[2].score == o_c["X:1"].score  # the same vector, the same score to the bit
    assert od_c[2].source == "ontology"
    # D-C: X:2's mean is its one synonym
    d_c = build_strategy(space, "d-c").normalize_batch(["q_dx"], k=1)[0][0]
    assert (d_c.concept_id, d_c.score) == ("X:2", pytest.approx(1.0))


def test_domain_targets_without_synonyms_are_refused() -> None:
    bare = make_space()
    for name in ("d-t", "od-c", "d-t+od-t"):
        with pytest.raises(EmptyResultError, match="needs domain synonyms"):
            build_strategy(bare, name)


@pytest.mark.parametrize("strategy", ["d-t", "od-t", "d-c", "od-c"])
def test_a_faiss_domain_backend_answers_as_the_exact_one(strategy: str) -> None:
    pytest.importorskip("faiss")
    exact, _ = make_space().with_synonyms([(DOMAIN_TEXT, ("X:2",)), ("d2", ("X:3",))])
    encoder = DictEncoder(TABLE)
    flat = SearchSpace(exact.index, encoder, domain_backend="faiss-flat")
    flat, _ = flat.with_synonyms([(DOMAIN_TEXT, ("X:2",)), ("d2", ("X:3",))])
    queries = ["q_dx", "q_gamma", "q_alpha"]
    want = build_strategy(exact, strategy).normalize_batch(queries, k=3)
    got = build_strategy(flat, strategy).normalize_batch(queries, k=3)
    assert [[c.concept_id for c in r] for r in got] == [[c.concept_id for c in r] for r in want]
    for a, b in zip(got, want, strict=True):
        assert [c.score for c in a] == pytest.approx([c.score for c in b], abs=1e-6)


# ----------------------------------------------------------------------------- synonyms
def test_synonyms_are_added_without_re_encoding_the_ontology() -> None:
    encoder = DictEncoder(TABLE)
    base = make_space(encoder)
    before = np.array(base.index.term_vectors)
    encoder.calls.clear()
    space, report = base.with_synonyms(
        [(DOMAIN_TEXT, ("X:2",)), (DOMAIN_TEXT, ("X:2",)), ("d2", ("OTHER:33",))]
    )
    assert encoder.calls == [[DOMAIN_TEXT, "d2"]]  # only the new texts, each once
    assert space.index is base.index
    np.testing.assert_array_equal(base.index.term_vectors, before)
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
    # three concepts, listed in reverse ID order, with texts whose vectors are equal up to 1e-8
    table = {"shared a": shared, "shared b": shared + 1e-8, "shared c": shared}
    table |= {"other": unit(0, 0, 1), "q": shared}
    concepts = [(c, c, [], []) for c in ("Y:9", "Y:10", "Y:2", "Y:5")]
    terms = [("Y:9", "shared a"), ("Y:10", "shared b"), ("Y:2", "shared c"), ("Y:5", "other")]
    encoder = DictEncoder(table)
    sp = SearchSpace(build_index(concepts, terms, encoder), encoder)
    for name in ("o-t", "o-c"):
        assert top(build_strategy(sp, name), "q", k=3) == ["Y:10", "Y:2", "Y:9"]
    # row order does not matter
    rev = SearchSpace(build_index(concepts[::-1], terms[::-1], encoder), encoder)
    assert top(build_strategy(rev, "o-t"), "q", k=3) == ["Y:10", "Y:2", "Y:9"]


def test_a_tie_goes_first_to_the_concept_named_by_the_text() -> None:
    shared = unit(1, 1, 0)
    encoder = DictEncoder({"ANIRIDIA": shared, "Aniridia": shared, "q": shared, "x": unit(0, 0, 1)})
    concepts = [("Y:1", "Aniridia, type 2", [], []), ("Y:2", "Aniridia", [], [])]
    index = build_index(concepts, [("Y:1", "ANIRIDIA"), ("Y:2", "Aniridia")], encoder)
    sp = SearchSpace(index, encoder)
    assert top(build_strategy(sp, "o-t"), "q", k=2) == ["Y:2", "Y:1"]


def test_between_ontology_and_domain_texts_of_a_concept_the_name_then_the_ontology_wins() -> None:
    v = unit(1, 1, 0)
    table = {"alpha": v, "alpha syn": v, "Alpha": v, "q": v, "b": unit(0, 0, 1)}
    encoder = DictEncoder(table)
    index = build_index(
        [("A:1", "alpha", [], []), ("B:1", "b", [], [])],
        [("A:1", "alpha syn"), ("B:1", "b")],
        encoder,
    )
    space, _ = SearchSpace(index, encoder).with_synonyms([("Alpha", ("A:1",))])
    # the ontology has only a synonym of A:1; the domain text is A:1's name: it is preferred
    best = build_strategy(space, "od-t").normalize("q", k=1)[0]
    assert (best.matched_term, best.source) == ("Alpha", "domain")
    space2, _ = SearchSpace(index, encoder).with_synonyms([("alpha syn", ("A:1",))])
    best = build_strategy(space2, "od-t").normalize("q", k=1)[0]
    assert (best.matched_term, best.source) == ("alpha syn", "ontology")


def test_a_saved_index_gets_synonyms_without_re_encoding(tmp_path: Path) -> None:
    encoder = KeyedEncoder({**INDEX_TABLE, "dom": e(2), "q dom": e(2)})
    TermIndex.build(known_kg(), encoder, backend="exact", show_progress=False).save(tmp_path)
    index = TermIndex.load(tmp_path)
    before = np.array(index.term_vectors)
    encoder.calls.clear()
    space, report = SearchSpace(index, encoder).with_synonyms([("dom", ("B:2",))])
    assert encoder.calls == [["dom"]] and report.kept == 1
    assert space.index is index
    np.testing.assert_array_equal(np.asarray(index.term_vectors), before)
    # "q dom" equals gamma's vector and the new synonym of B:2: B:2 < C:3, a tie at cos 1
    assert top(build_strategy(space, "o-t"), "q dom") == ["C:3"]
    assert top(build_strategy(space, "d-t+od-t"), "q dom", k=2) == ["B:2", "C:3"]
    assert build_strategy(space, "o-t").alt_ids("C:3") == ("OMIM:333",)
    # OMIM:333 resolves to C:3 through its alt ID
    _, report2 = space.with_synonyms([("gamma alias", ("333",))])
    assert report2.kept == 1
