"""Provenance of candidates, abstention below ``min_score``, namespace / semantic-type
filters, and approximate backends checked against exact search, through the one matcher."""

from __future__ import annotations

import json

import numpy as np
import pytest

from _search_fakes import DOMAIN_TEXT, DictEncoder, build_index, make_space, unit
from termnorm.errors import EmptyResultError
from termnorm.search import SearchSpace
from termnorm.search import space_matcher as matcher_module
from termnorm.search.filters import FilterError, namespace_of
from termnorm.search.space_matcher import build_strategy


# ----------------------------------------------------------------------------- provenance
def test_a_candidate_says_what_matched_and_where_it_comes_from() -> None:
    space, _ = make_space().with_synonyms([(DOMAIN_TEXT, ("X:2",))], source="mine.tsv")
    o_t = build_strategy(space, "o-t").normalize("q_alpha", k=2)
    assert o_t[0]._asdict() == {
        "concept_id": "X:1",
        "name": "alpha",
        "score": pytest.approx(float(unit(0.99, 0.1, 0) @ unit(1, 0, 0))),
        "matched_term": "alpha",
        "rank": 1,
        "source": "ontology",
        "term_source": "SRC",
        "is_preferred": True,
        "semantic_types": ("Finding",),
        "expanded_from": None,
        "recall_score": None,
        "ranker_score": None,
        "attributes": (),  # the concept has no vocabulary attributes (OMOP's would be here)
        "expansion": None,
        "expansion_source": None,
    }
    assert (o_t[1].matched_term, o_t[1].is_preferred) == ("beta", True)
    d_t = build_strategy(space, "d-t").normalize("q_dx", k=1)[0]
    assert (d_t.matched_term, d_t.source, d_t.term_source, d_t.is_preferred) == (
        DOMAIN_TEXT,
        "domain",
        "mine.tsv",
        False,
    )
    o_c = build_strategy(space, "o-c").normalize("q_gamma", k=1)[0]
    assert (o_c.matched_term, o_c.term_source, o_c.is_preferred) == ("gamma", "", True)
    assert o_c.semantic_types == ("Disease",)
    json.dumps([c._asdict() for c in [*o_t, d_t, o_c]])  # JSON-ready


def test_a_synonym_match_is_not_preferred() -> None:
    encoder = DictEncoder({"alpha": unit(1, 0, 0), "alpha two": unit(0, 1, 0), "q": unit(0, 1, 0)})
    index = build_index(
        [("X:1", "alpha", [], [])], [("X:1", "alpha"), ("X:1", "alpha two")], encoder
    )
    best = build_strategy(SearchSpace(index, encoder), "o-t").normalize("q", k=1)[0]
    assert (best.matched_term, best.is_preferred, best.term_source) == ("alpha two", False, "SRC")


# ----------------------------------------------------------------------------- abstention
def test_min_score_drops_weak_candidates_and_abstains_with_a_reason() -> None:
    matcher = build_strategy(make_space(), "o-t")
    assert [c.concept_id for c in matcher.normalize("q_dx", k=3)] == ["X:3", "X:1", "X:2"]
    strict = matcher.configure(min_score=0.7)
    kept = strict.normalize("q_dx", k=3)  # gamma 0.8 kept; alpha 0.6 and beta 0 dropped
    assert [(c.concept_id, c.rank) for c in kept] == [("X:3", 1)]
    none = matcher.configure(min_score=0.9)
    rows = none.normalize_rows(["q_dx", "q_gamma", ""], k=3)
    assert rows[0].candidates == [] and rows[0].abstained == "no concept scored >= 0.9"
    assert rows[0].error is None
    assert rows[1].abstained is None and rows[1].candidates[0].concept_id == "X:3"
    assert rows[2].error is not None and rows[2].abstained is None  # bad input is not abstention
    assert none.normalize("q_dx") == []
    assert matcher.normalize("q_dx", k=3) != kept  # configure() leaves the original as it was


def test_min_score_applies_to_the_sieve_answer() -> None:
    space, _ = make_space().with_synonyms([(DOMAIN_TEXT, ("X:2",))])
    sieve = build_strategy(space, "d-t+o-t").configure(min_score=0.85)
    # q_dx: the sieve trusts D-T (cos 1) then O-T's ranking; only X:2 reaches 0.85
    assert [c.concept_id for c in sieve.normalize("q_dx", k=3)] == ["X:2"]
    # q_alpha: D-T is not trusted; O-T's alpha scores 0.995
    assert [c.concept_id for c in sieve.normalize("q_alpha", k=3)] == ["X:1"]


# ----------------------------------------------------------------------------- filters
N_CONCEPTS = 120
SPACES = ("AA", "BB", "CC", "DD")


@pytest.fixture(scope="module")
def random_space() -> SearchSpace:
    """120 concepts with 1-3 random terms each, namespaces AA..DD, types T1/T2."""
    rng = np.random.default_rng(7)
    table: dict[str, np.ndarray] = {}
    concepts, terms = [], []
    for i in range(N_CONCEPTS):
        cid = f"{SPACES[i % 4]}:{i:04d}"
        kinds = ["T1"] if i % 3 else ["T1", "T2"] if i % 2 else ["T2"]
        concepts.append((cid, f"name {i}", kinds, []))
        for j in range(1 + i % 3):
            text = f"name {i}" if j == 0 else f"syn {i}.{j}"
            v = rng.standard_normal(16).astype(np.float32)
            table[text] = v / np.linalg.norm(v)
            terms.append((cid, text))
    for q in range(12):
        v = rng.standard_normal(16).astype(np.float32)
        table[f"q{q}"] = v / np.linalg.norm(v)
    encoder = DictEncoder(table)
    return SearchSpace(build_index(concepts, terms, encoder), encoder)


def brute_force(space: SearchSpace, query: str, keep: set[str], k: int) -> list[str]:
    """The top-k concepts of ``keep`` by their best term's cosine (random vectors: no ties)."""
    index = space.index
    scores = np.asarray(index.term_vectors) @ space.encoder.encode([query])[0]
    best: dict[str, float] = {}
    for cid, s in zip(index.terms["concept_id"], scores, strict=True):
        if cid in keep:
            best[cid] = max(best.get(cid, -2.0), float(s))
    return sorted(best, key=lambda c: -best[c])[:k]


@pytest.mark.parametrize("restrict", [True, False])
@pytest.mark.parametrize(
    ("namespaces", "types"),
    [(["BB"], None), (["aa", "CC"], None), (None, ["T2"]), (["DD"], ["t2"]), (None, "-t1")],
)
def test_filters_keep_only_passing_concepts_and_still_find_k(
    random_space: SearchSpace,
    namespaces: list[str] | None,
    types: list[str] | str | None,
    restrict: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # restrict: exact search over the allowed rows; else over-fetching from the whole index
    monkeypatch.setattr(matcher_module, "RESTRICT_FRACTION", 1.0 if restrict else 0.0)
    excluded = [types[1:]] if isinstance(types, str) else None  # "-t1": every type but T1
    matcher = build_strategy(random_space, "o-t").configure(
        namespaces=namespaces,
        semantic_types=None if excluded else types,
        excluded_types=excluded,
    )
    index = random_space.index
    wanted_spaces = {n.upper() for n in namespaces or SPACES}
    wanted_types = {t.upper() for t in types or ("T1", "T2")} if not excluded else set()
    keep = {
        cid
        for cid, kinds in zip(
            index.concepts["concept_id"], index.concepts["semantic_types"], strict=True
        )
        if namespace_of(cid) in wanted_spaces
        and (wanted_types & set(kinds) if not excluded else "T1" not in kinds)
    }
    for q in range(12):
        got = matcher.normalize(f"q{q}", k=5)
        assert [c.concept_id for c in got] == brute_force(random_space, f"q{q}", keep, 5)
        assert [c.rank for c in got] == [1, 2, 3, 4, 5]


def test_a_filter_applies_to_concept_vectors_and_domain_synonyms(random_space: SearchSpace) -> None:
    space, _ = random_space.with_synonyms([("q0", ("AA:0000",)), ("q1", ("BB:0001",))])
    for strategy in ("o-c", "d-t", "od-t", "od-c", "d-t+od-t"):
        got = build_strategy(space, strategy).configure(namespaces=["BB"]).normalize("q0", k=5)
        assert got and all(namespace_of(c.concept_id) == "BB" for c in got), strategy


def test_unknown_filter_values_are_refused_with_what_exists(random_space: SearchSpace) -> None:
    matcher = build_strategy(random_space, "o-t")
    with pytest.raises(FilterError, match=r"unknown namespace 'HP': the index has 'AA', 'BB'"):
        matcher.configure(namespaces=["HP"])
    with pytest.raises(FilterError, match=r"unknown semantic type 'Disease or Syndrome'.*'T1'"):
        matcher.configure(semantic_types=["Disease or Syndrome"])
    # A:1 is T1, B:1 is T2: no concept is both in namespace A and of type T2
    encoder = DictEncoder({"a": unit(1, 0), "b": unit(0, 1)})
    index = build_index(
        [("A:1", "a", ["T1"], []), ("B:1", "b", ["T2"], [])], [("A:1", "a"), ("B:1", "b")], encoder
    )
    small = build_strategy(SearchSpace(index, encoder), "o-t")
    with pytest.raises(EmptyResultError, match="no concept of the index is in namespaces A and"):
        small.configure(namespaces=["A"], semantic_types=["T2"])
    assert small.configure(namespaces=["A"]).configure(semantic_types=["T1"]).config.filter == (
        small.configure(namespaces=["A"], semantic_types=["T1"]).config.filter
    )


# ----------------------------------------------------------------------------- backends
@pytest.mark.parametrize("backend", ["faiss-flat", "faiss-hnsw"])
def test_an_approximate_index_answers_as_the_exact_one(backend: str) -> None:
    faiss = pytest.importorskip("faiss")
    faiss.omp_set_num_threads(1)
    rng = np.random.default_rng(3)
    table = {}
    for i in range(300):
        v = rng.standard_normal(8).astype(np.float32)
        table[f"t{i}"] = v / np.linalg.norm(v)
    queries = [f"t{i}" for i in range(0, 300, 37)]
    concepts = [
        (f"C:{i // 3}", f"t{i - i % 3}", ["A" if i % 2 else "B"], []) for i in range(0, 300, 3)
    ]
    terms = [(f"C:{i // 3}", f"t{i}") for i in range(300)]
    encoder = DictEncoder(table)
    exact = SearchSpace(build_index(concepts, terms, encoder), encoder)
    approx = SearchSpace(build_index(concepts, terms, encoder, backend=backend), encoder)
    for strategy in ("o-t", "o-c"):
        want = build_strategy(exact, strategy).normalize_batch(queries, k=5)
        got = build_strategy(approx, strategy).normalize_batch(queries, k=5)
        assert [[c.concept_id for c in r] for r in got] == [[c.concept_id for c in r] for r in want]
        filtered = build_strategy(approx, strategy).configure(semantic_types=["A"])
        want_f = build_strategy(exact, strategy).configure(semantic_types=["A"])
        assert [[c.concept_id for c in r] for r in filtered.normalize_batch(queries, k=3)] == [
            [c.concept_id for c in r] for r in want_f.normalize_batch(queries, k=3)
        ]
