"""Normalizer (the O-T / O-C configuration of the one matcher): known answers, dedup,
over-fetch, deterministic ties, modes, input checks."""

from __future__ import annotations

import numpy as np
import pytest

from _index_fakes import TABLE, KeyedEncoder, e, known_kg, unit
from termnorm.errors import ArtifactMismatchError
from termnorm.index import TermIndex
from termnorm.kg import KnowledgeGraph
from termnorm.search import Candidate, Matcher, Normalizer, QueryError, SearchSpace
from termnorm.search.space_matcher import build_strategy


@pytest.fixture()
def normalizer() -> Normalizer:
    encoder = KeyedEncoder()
    return Normalizer(TermIndex.build(known_kg(), encoder, show_progress=False), encoder)


def test_is_a_matcher(normalizer: Normalizer) -> None:
    assert isinstance(normalizer, Matcher)
    assert normalizer.name == "embedding-term"


def test_known_answer_with_dedup(normalizer: Normalizer) -> None:
    top = normalizer.normalize("q alpha", k=2)
    # A:1 appears once (at "alpha disease", cos 1), not again at "alpha syndrome" (cos 3/√10)
    assert top[0] == Candidate(
        "A:1", "alpha disease", pytest.approx(1.0), "alpha disease", 1, is_preferred=False
    )
    assert (top[1].concept_id, top[1].matched_term, top[1].rank) == ("B:2", "beta variant", 2)
    assert top[1].score == pytest.approx(1 / np.sqrt(10), abs=2**-11)  # float16 storage


def test_ties_break_by_concept_id(normalizer: Normalizer) -> None:
    # Z:9's term is earlier in the table, the tie still goes to the smaller ID Z:1
    top = normalizer.normalize("q zeta", k=2)
    assert [c.concept_id for c in top] == ["Z:1", "Z:9"]
    assert top[0].score == top[1].score
    assert normalizer.normalize("q zeta", k=1)[0].concept_id == "Z:1"


def test_ties_go_first_to_the_concept_matched_at_its_name() -> None:
    # MEDIC's case: "Aniridia" names D:2 and is a synonym of "Aniridia, type 2" (D:1)
    v = TABLE["q zeta"]
    table = {"ANIRIDIA": v, "Aniridia": v, "aniridia variant": v, "q zeta": v}
    concepts = [
        {"concept_id": "D:1", "name": "Aniridia, type 2"},
        {"concept_id": "D:2", "name": "Aniridia"},
        {"concept_id": "D:3", "name": "Aniridia 3"},
    ]
    terms = [
        ("D:1", "Aniridia, type 2"),
        ("D:1", "ANIRIDIA"),
        ("D:3", "aniridia variant"),  # D:3's synonym comes before its name, which ties it
        ("D:3", "Aniridia 3"),
        ("D:2", "Aniridia"),
    ]
    table["Aniridia 3"] = v
    kg = KnowledgeGraph.from_records(concepts, [{"concept_id": c, "term": t} for c, t in terms])
    encoder = KeyedEncoder(table)
    norm = Normalizer(TermIndex.build(kg, encoder, show_progress=False), encoder)
    top = norm.normalize("q zeta", k=3)
    assert [(c.concept_id, c.matched_term) for c in top] == [
        ("D:2", "Aniridia"),
        ("D:3", "Aniridia 3"),
        ("D:1", "ANIRIDIA"),
    ]


def test_tie_beyond_the_first_fetch_is_resolved() -> None:
    # 40 concepts share one vector; the smallest ID's term is the very last row
    ids = [f"T:{i:02d}" for i in range(40, 0, -1)]
    concepts = [{"concept_id": c, "name": c} for c in ids]
    table = {c: TABLE["q zeta"] for c in ids} | {"q zeta": TABLE["q zeta"]}
    kg = KnowledgeGraph.from_records(concepts, [{"concept_id": c, "term": c} for c in ids])
    encoder = KeyedEncoder(table)
    norm = Normalizer(TermIndex.build(kg, encoder, show_progress=False), encoder)
    assert [c.concept_id for c in norm.normalize("q zeta", k=3)] == ["T:01", "T:02", "T:03"]


def test_overfetch_fills_k_distinct_concepts() -> None:
    # A:1 has 30 more synonyms nearer the query than anything of B:2
    extra = [f"alpha {i}" for i in range(30)]
    table = dict(TABLE) | {t: unit(1, 0.01 * (i + 1)) for i, t in enumerate(extra)}
    encoder = KeyedEncoder(table)
    kg = known_kg(extra_terms=[("A:1", t) for t in extra])
    norm = Normalizer(TermIndex.build(kg, encoder, show_progress=False), encoder)
    top = norm.normalize("q alpha", k=3)  # the first fetch (19 terms) holds only A:1
    # then B:2 ("beta variant", cos 1/√10); C:3, Z:1, Z:9 tie at cos 0 → smallest ID
    assert [c.concept_id for c in top] == ["A:1", "B:2", "C:3"]


def test_k_larger_than_the_kg(normalizer: Normalizer) -> None:
    top = normalizer.normalize("q alpha", k=50)
    assert len(top) == 5 and [c.rank for c in top] == [1, 2, 3, 4, 5]


def test_concept_mode_uses_mean_vectors() -> None:
    encoder = KeyedEncoder()
    index = TermIndex.build(known_kg(), encoder, show_progress=False)
    norm = Normalizer(index, encoder, mode="concept")
    top = norm.normalize("q alpha", k=1)[0]
    mean = TABLE["alpha disease"] + TABLE["alpha syndrome"]
    assert top.concept_id == "A:1" and top.matched_term == "alpha disease"  # the name
    assert top.score == pytest.approx(float(mean[0] / np.linalg.norm(mean)), abs=2**-11)


def test_domain_synonyms_searched_beside_the_index_are_matched() -> None:
    encoder = KeyedEncoder(TABLE | {"ALPHA-like gamma": TABLE["q alpha"]})
    index = TermIndex.build(known_kg(), encoder, show_progress=False)
    space, _ = SearchSpace(index, encoder).with_synonyms([("ALPHA-like gamma", ("C:3",))])
    top = build_strategy(space, "od-t").normalize("q alpha", k=2)
    assert [(c.concept_id, c.matched_term, c.source) for c in top] == [
        ("A:1", "alpha disease", "ontology"),
        ("C:3", "ALPHA-like gamma", "domain"),
    ]
    assert len(index.terms) == 7  # the index itself is unchanged


def test_a_domain_synonym_that_is_a_concept_name_counts_in_ties() -> None:
    encoder = KeyedEncoder(TABLE | {"Alpha Disease": TABLE["q zeta"]})
    index = TermIndex.build(known_kg(), encoder, show_progress=False)
    space, _ = SearchSpace(index, encoder).with_synonyms([("Alpha Disease", ("A:1",))])
    assert [c.concept_id for c in Normalizer(index, encoder).normalize("q zeta", k=2)] == [
        "Z:1",
        "Z:9",
    ]
    top = build_strategy(space, "od-t").normalize("q zeta", k=3)  # A:1's name again: first
    assert [(c.concept_id, c.matched_term) for c in top] == [
        ("A:1", "Alpha Disease"),
        ("Z:1", "zeta one"),
        ("Z:9", "zeta nine"),
    ]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("", "empty input"),
        ("   \t", "whitespace-only input"),
        (None, "empty input: no text given"),
        (float("nan"), "empty input: no text given"),
        (42, "not text: got int 42"),
        (["a"], "not text: got list"),
        ("x" * 1001, "input too long: 1001 characters, the limit is 1000"),
    ],
)
def test_bad_inputs_get_a_clear_message(
    normalizer: Normalizer, value: object, message: str
) -> None:
    rows = normalizer.normalize_rows([value, "q alpha"], k=1)
    assert rows[0].candidates == [] and message in (rows[0].error or "")
    assert rows[1].error is None and rows[1].candidates[0].concept_id == "A:1"
    with pytest.raises(QueryError, match=f"row 0: {message[:12]}"):
        normalizer.normalize_batch([value], k=1)  # type: ignore[list-item]


def test_input_is_stripped_and_limit_configurable() -> None:
    encoder = KeyedEncoder()
    norm = Normalizer(
        TermIndex.build(known_kg(), encoder, show_progress=False), encoder, max_chars=5
    )
    with pytest.raises(QueryError, match="the limit is 5"):
        norm.normalize("q alpha")
    assert norm.normalize("  zeta  ", k=1)[0].concept_id == "Z:1"
    assert encoder.calls[-1] == ["zeta"]


def test_bad_k(normalizer: Normalizer) -> None:
    with pytest.raises(ValueError, match="k must be >= 1"):
        normalizer.normalize("q alpha", k=0)


def test_alt_ids(normalizer: Normalizer) -> None:
    assert normalizer.alt_ids("C:3") == ("OMIM:333",)


def test_an_encoder_other_than_the_index_one_is_refused() -> None:
    index = TermIndex.build(known_kg(), KeyedEncoder(), show_progress=False)
    with pytest.raises(ArtifactMismatchError, match=r"fingerprint keyed-1.*fingerprint keyed-2"):
        Normalizer(index, KeyedEncoder(fingerprint="keyed-2"))


def test_scores_are_cosines_clipped_to_one() -> None:
    # vectors a hair longer than unit (float16 storage, fp rounding) score 1.00002 and -1.00002
    table = {**TABLE, "q over": e(0) * np.float32(1.00002), "q under": -e(2) * np.float32(1.00002)}
    encoder = KeyedEncoder(table)
    normalizer = Normalizer(TermIndex.build(known_kg(), encoder, show_progress=False), encoder)
    top = normalizer.normalize("q over", k=5)
    assert (top[0].concept_id, top[0].score) == ("A:1", 1.0)
    bottom = normalizer.normalize("q under", k=5)
    assert (bottom[-1].concept_id, bottom[-1].score) == ("C:3", -1.0)
    assert all(-1.0 <= c.score <= 1.0 for c in [*top, *bottom])
