"""The annotation pipeline: detect, normalize through the spec, drop non-concepts, assert."""

from __future__ import annotations

from pathlib import Path

import pytest

from termnorm.annotate import DictionaryDetector, Span
from termnorm.annotate.pipeline import (
    Annotation,
    Annotator,
    DocumentError,
    named_first,
)
from termnorm.search.candidate import Candidate, RowResult
from termnorm.search.filters import FilterError
from termnorm.search.spec import PipelineSpec

DONE_WHEN = "Patient denies heart attack; history of asthma."


@pytest.fixture()
def annotator(index_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Annotator:
    monkeypatch.setenv("TERMNORM_CACHE", str(tmp_path / "cache"))
    return Annotator(PipelineSpec(index=index_dir, min_score=0.99))


def _by_text(annotations: list[Annotation]) -> dict[str, Annotation]:
    return {a.text: a for a in annotations}


def test_done_when_sentence_gives_concepts_offsets_and_negation(annotator: Annotator) -> None:
    found = annotator.annotate(DONE_WHEN, doc_id="d1")
    got = _by_text(found)
    assert sorted(got) == ["asthma", "heart attack"]
    attack = got["heart attack"]
    assert (attack.start, attack.end) == (15, 27)
    assert attack.concept_id == "T:0001"
    assert attack.name == "myocardial infarction"
    assert attack.negated and not attack.historical
    assert attack.doc_id == "d1" and attack.detector == "dictionary"
    assert attack.matched_term == "heart attack"
    assert attack.candidates[0] == ("T:0001", "myocardial infarction", attack.score)
    assert got["asthma"].concept_id == "T:0004" and got["asthma"].historical
    assert not got["asthma"].negated
    assert [a.start for a in found] == sorted(a.start for a in found)


def test_default_detector_is_cached_on_disk(annotator: Annotator, tmp_path: Path) -> None:
    annotator.annotate(DONE_WHEN)
    cards = list((tmp_path / "cache" / "dictionaries").glob("*/dictionary.json"))
    assert len(cards) == 1


def test_offsets_are_exact_on_hostile_text(annotator: Annotator) -> None:
    text = "👩‍⚕️ Notes:\r\n\u00a0denies  heart\u00a0attack.\r\nFamily: asthma 🫁; e\u0301 DM\r\n"
    found = annotator.annotate(text, "hostile")
    assert {a.text for a in found} >= {"heart\u00a0attack", "asthma"}
    for a in found:
        assert text[a.start : a.end] == a.text


def test_mention_across_a_window_edge_is_found_once(annotator: Annotator) -> None:
    annotator.max_chars = 30
    text = "The patient was admitted today with a heart attack and also bronchial asthma."
    found = annotator.annotate(text)
    texts = [a.text for a in found]
    assert texts == ["heart attack", "bronchial asthma"]
    for a in found:
        assert text[a.start : a.end] == a.text


def test_spans_below_min_score_are_dropped(index_dir: Path) -> None:
    """A detector may find a word that no concept name is ("patient"): the normalizer gives
    it no candidate at a min_score only exact names reach, so the span is dropped."""
    detector = DictionaryDetector.from_names([("T:0004", "asthma"), ("T:0004", "patient")])
    strict = Annotator(PipelineSpec(index=index_dir, min_score=0.999), detectors=[detector])
    assert [a.text for a in strict.annotate("The patient has asthma.")] == ["asthma"]
    loose = Annotator(PipelineSpec(index=index_dir, min_score=-1.0), detectors=[detector])
    assert [a.text for a in loose.annotate("The patient has asthma.")] == ["patient", "asthma"]


def test_each_distinct_span_text_is_normalized_once_in_one_call(index_dir: Path) -> None:
    calls: list[list[object]] = []

    class Counting:
        def __init__(self, inner: object) -> None:
            self.inner = inner
            self.name = "counting"

        def normalize_rows(self, texts: list[object], k: int = 5) -> object:
            calls.append(list(texts))
            return self.inner.normalize_rows(texts, k)  # type: ignore[attr-defined]

    from termnorm.search.build import build

    spec = PipelineSpec(index=index_dir)
    detector = DictionaryDetector.from_names([("T:0004", "asthma")])
    annotator = Annotator(spec, detectors=[detector], matcher=Counting(build(spec)))  # type: ignore[arg-type]
    found = annotator.annotate("asthma, asthma and asthma.")
    assert len(found) == 3
    assert calls == [["asthma"]]


def test_document_abbreviation_is_expanded(index_dir: Path) -> None:
    """A short form the document defines is searched through its long form."""

    class ShortForm:
        name = "short"

        def detect(self, text: str) -> list[Span]:
            at = text.rindex("HA")
            return [Span(at, at + 2, "HA", self.name)]

    spec = PipelineSpec(index=index_dir, min_score=0.99)
    annotator = Annotator(spec, detectors=[ShortForm()])
    text = "He had a heart attack (HA) last year. The HA was mild."
    (found,) = annotator.annotate(text)
    assert (found.text, found.concept_id) == ("HA", "T:0001")
    assert found.expanded_from == "HA"
    assert found.to_dict()["provenance"]["expanded_from"] == "HA"


def test_empty_and_blank_text_have_no_annotation(annotator: Annotator) -> None:
    assert annotator.annotate("") == []
    assert annotator.annotate(" \r\n\t") == []


def test_document_over_the_size_cap_is_refused_by_name(index_dir: Path) -> None:
    annotator = Annotator(PipelineSpec(index=index_dir), max_document_chars=10)
    with pytest.raises(DocumentError, match=r"document 'long-1'.*over the limit of 10"):
        annotator.annotate("x" * 11, doc_id="long-1")


def test_bytes_are_refused(index_dir: Path) -> None:
    annotator = Annotator(PipelineSpec(index=index_dir))
    with pytest.raises(DocumentError, match=r"document 'b'.*got bytes: decode it first"):
        annotator.annotate(b"asthma", doc_id="b")  # type: ignore[arg-type]


def test_annotate_many_isolates_a_bad_document(annotator: Annotator) -> None:
    annotator.max_document_chars = 100
    docs = [("ok1", "asthma"), ("big", "asthma " * 50), ("raw", b"x"), ("ok2", DONE_WHEN)]
    results = list(annotator.annotate_many(docs))  # type: ignore[arg-type]
    assert [r.doc_id for r in results] == ["ok1", "big", "raw", "ok2"]
    assert [len(r.annotations) for r in results] == [1, 0, 0, 2]
    assert results[1].error is not None and "over the limit" in results[1].error
    assert results[2].error is not None and "bytes" in results[2].error
    assert results[0].error is None and results[3].error is None


def test_annotation_round_trips_through_its_dict() -> None:
    a = Annotation(
        "d",
        3,
        9,
        "asthma",
        "T:0004",
        "asthma",
        0.97,
        "dictionary+tagger",
        family=True,
        candidates=(("T:0004", "asthma", 0.97), ("T:0009", "lung disease", 0.5)),
        matched_term="asthma",
        assertion_language="de",
        assertion_language_source="declared",
    )
    row = a.to_dict()
    assert row["provenance"] == {
        "detector": "dictionary+tagger",
        "matched_term": "asthma",
        "expanded_from": None,
        "expansion": None,
        "expansion_source": None,
        "assertion_language": "de",
        "assertion_language_source": "declared",
    }
    assert row["candidates"][1] == {"concept_id": "T:0009", "name": "lung disease", "score": 0.5}
    assert Annotation.from_dict(row) == a


def test_bad_settings_are_refused(index_dir: Path) -> None:
    spec = PipelineSpec(index=index_dir)
    with pytest.raises(ValueError, match="k must be at least 1"):
        Annotator(spec, k=0)
    with pytest.raises(ValueError, match="detectors is empty"):
        Annotator(spec, detectors=[])


def test_termnorm_annotate_answers_as_the_api_function_after_submodule_imports(
    index_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``termnorm.annotate(...)`` is the API function although the package of that name and
    its submodules are imported (a fresh process checks before and after, below)."""
    import termnorm
    from termnorm import api

    monkeypatch.setenv("TERMNORM_CACHE", str(tmp_path / "cache"))
    first = api.annotate(DONE_WHEN, index=index_dir, min_score=0.99)
    import termnorm.annotate.pipeline

    again = termnorm.annotate(DONE_WHEN, index=str(index_dir), min_score=0.99)
    assert first == again
    assert [(a.text, a.concept_id, a.negated) for a in again] == [
        ("heart attack", "T:0001", True),
        ("asthma", "T:0004", False),
    ]
    many = termnorm.annotate(["asthma", "", "migraine"], index=index_dir, min_score=0.99)
    assert [[(a.doc_id, a.concept_id) for a in doc] for doc in many] == [
        [("0", "T:0004")],
        [],
        [("2", "T:0005")],
    ]


def test_api_synonym_pairs_reach_the_dictionary_and_the_search(
    index_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from termnorm import api

    monkeypatch.setenv("TERMNORM_CACHE", str(tmp_path / "cache"))
    text = "Known wheezy chest since childhood."
    assert api.annotate(text, index=index_dir, min_score=0.99) == []
    found = api.annotate(
        text, index=index_dir, min_score=0.99, synonyms=[("T:0004", "wheezy chest")]
    )
    assert [(a.text, a.concept_id, a.matched_term) for a in found] == [
        ("wheezy chest", "T:0004", "wheezy chest")
    ]


def test_api_refuses_bytes_and_unknown_options(index_dir: Path) -> None:
    from termnorm import api

    with pytest.raises(DocumentError, match="got bytes: decode it first"):
        api.annotate(b"asthma", index=index_dir)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="colour"):
        api.annotate("asthma", index=index_dir, colour="red")


def test_root_annotate_is_the_api_function_before_and_after_the_package_is_imported() -> None:
    import subprocess
    import sys

    code = (
        "import termnorm, termnorm.api as api\n"
        "assert termnorm.annotate is api.annotate, termnorm.annotate\n"
        "import termnorm.annotate.pipeline\n"
        "from termnorm.annotate import Annotator\n"
        "assert termnorm.annotate is api.annotate, termnorm.annotate\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_dictionary_detector_is_kept_per_index_until_a_synonym_file_changes(
    index_dir: Path, tmp_path: Path
) -> None:
    import os

    from termnorm.annotate.pipeline import dictionary_detector
    from termnorm.search.build import load_index

    index = load_index(index_dir)
    synonyms = tmp_path / "syn.tsv"
    synonyms.write_text("T:0004\twheezy chest\n", encoding="utf-8")
    first = dictionary_detector(index, [synonyms], cache=tmp_path / "dicts")
    assert dictionary_detector(index, [synonyms], cache=tmp_path / "dicts") is first
    assert [s.text for s in first.detect("a wheezy chest")] == ["wheezy chest"]
    synonyms.write_text("T:0005\tbad head\n", encoding="utf-8")
    os.utime(synonyms, ns=(1, 1))
    changed = dictionary_detector(index, [synonyms], cache=tmp_path / "dicts")
    assert changed is not first
    assert [s.text for s in changed.detect("a wheezy chest, a bad head")] == ["bad head"]


def test_the_dictionary_finds_only_concepts_the_spec_filter_lets_through(
    index_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TERMNORM_CACHE", str(tmp_path / "cache"))
    lungs = Annotator(PipelineSpec(index=index_dir, min_score=0.99, semantic_types=("lung",)))
    assert [s.text for s in lungs.find_spans(DONE_WHEN)] == ["asthma"]
    assert [a.concept_id for a in lungs.annotate(DONE_WHEN)] == ["T:0004"]
    everything = Annotator(PipelineSpec(index=index_dir, min_score=0.99))
    assert [s.text for s in everything.find_spans(DONE_WHEN)] == ["heart attack", "asthma"]
    unknown = Annotator(PipelineSpec(index=index_dir, semantic_types=("bones",)))
    with pytest.raises(FilterError, match="unknown semantic type 'bones'"):
        unknown.find_spans(DONE_WHEN)


def test_a_concept_the_span_is_a_name_of_ranks_first_then_the_normalizer_order() -> None:
    def cand(cid: str, score: float, rank: int) -> Candidate:
        return Candidate(cid, cid.lower(), score, cid.lower(), rank)

    result = RowResult([cand("A", 0.9, 1), cand("B", 0.8, 2), cand("C", 0.7, 3)])
    moved = named_first(result, ("C", "B"))
    assert [(c.concept_id, c.rank) for c in moved.candidates] == [("B", 1), ("C", 2), ("A", 3)]
    assert named_first(result, ("A",)) is result  # already first
    assert named_first(result, ("Z",)) is result  # no named concept among the candidates
    assert named_first(result, ()) is result  # a tagger span names none


def test_the_dictionary_concept_of_a_span_wins_over_a_closer_neighbour(index_dir: Path) -> None:
    class Named:
        name = "dictionary"

        def detect(self, text: str) -> list[Span]:
            at = text.index("heart attack")
            return [Span(at, at + 12, "heart attack", self.name, ("T:0008",))]

    plain = Annotator(PipelineSpec(index=index_dir), detectors=[Named()], k=10)
    (found,) = plain.annotate("A heart attack.")
    assert found.concept_id == "T:0008"  # heart disease, below myocardial infarction's score
    assert found.candidates[0][0] == "T:0008"
    assert found.score < max(score for _, _, score in found.candidates)


def test_synonym_files_with_bare_ids_name_the_index_concepts(
    index_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TERMNORM_CACHE", str(tmp_path / "cache"))
    synonyms = tmp_path / "syn.tsv"
    synonyms.write_text("0004\twheezy chest\n", encoding="utf-8")  # T:0004 written bare
    spec = PipelineSpec(index=index_dir, synonyms=(synonyms,), semantic_types=("lung",))
    (span,) = Annotator(spec).find_spans("A wheezy chest.")
    assert (span.text, span.concept_ids) == ("wheezy chest", ("T:0004",))
