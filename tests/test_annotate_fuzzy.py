"""Misspelled words read by the dictionary detector (``--spelling``): the correction rule,
the spans' queries, the annotations' provenance and the spec option."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from termnorm.annotate import DictionaryDetector
from termnorm.annotate.detectors import DetectorSource, dictionary_of_spec
from termnorm.annotate.fuzzy import (
    FuzzyDictionaryDetector,
    SpellingCorrector,
    english_words,
    sound_key,
)
from termnorm.annotate.pipeline import Annotator
from termnorm.annotate.spec import AnnotateSpec
from termnorm.errors import MissingExtraError
from termnorm.search.spec import PipelineSpec

NAMES = [
    ("HP:1", "Headache"),
    ("HP:2", "Dizziness"),
    ("HP:3", "Migraine"),
    ("HP:4", "Erythema migrans"),
    ("HP:5", "Fatigue"),
    ("HP:6", "Dental caries"),
    ("HP:7", "Ataxia"),
    ("HP:8", "Brachydactyly"),
    ("HP:9", "Brachydactyls"),  # not English, one edit from a misspelling "brachydactylx"
    ("HP:10", "Brachydactylz"),
    ("HP:11", "Acne"),
]
ENGLISH = frozenset({"headache", "dizziness", "migraine", "fatigue", "mental", "dental"})


@pytest.fixture(scope="module")
def detector() -> FuzzyDictionaryDetector:
    plain = DictionaryDetector.from_names(NAMES)
    words = {w for _, name in NAMES for w in name.split()}
    return FuzzyDictionaryDetector(plain, SpellingCorrector(words, plain.compiled.vocab, ENGLISH))


@pytest.mark.parametrize(
    ("word", "fixed"),
    [
        ("headake", "headache"),  # "ch" and "k" are one sound
        ("Dizzyness", "dizziness"),
        ("migrane", "migraine"),  # "migrans" is as near: the English word wins the tie
        ("fatique", "fatigue"),
        ("atacxia", "ataxia"),
    ],
)
def test_a_misspelling_is_read_as_the_one_name_word_near_it(
    detector: FuzzyDictionaryDetector, word: str, fixed: str
) -> None:
    assert detector.corrector.correct(word) == fixed


@pytest.mark.parametrize(
    ("word", "why"),
    [
        ("mental", "an English word is never corrected, though 'dental' is one edit away"),
        ("ataxia", "a name word itself"),
        ("Ataxias", "one edit from a name word whose key it has already"),
        ("ance", "one edit from 'acne', but under 5 letters is never corrected"),
        ("atax1a", "not all letters"),
        ("brachydactylx", "two name words one edit away, neither English: a tie"),
        ("headpiece", "no name word within one edit"),
    ],
)
def test_what_is_never_corrected(detector: FuzzyDictionaryDetector, word: str, why: str) -> None:
    assert detector.corrector.correct(word) is None, why


def test_sound_key_writes_one_sound_one_way() -> None:
    assert sound_key("HEADACHE") == sound_key("headake") == "headake"
    assert sound_key("Phosphate") == "fosfate"


def test_spans_keep_the_text_as_written_and_carry_the_corrected_query(
    detector: FuzzyDictionaryDetector,
) -> None:
    text = "Headake, dizzyness and marked fatique; no atacxia. Mental state normal."
    spans = detector.detect(text)
    assert [(s.text, s.query, s.concept_ids) for s in spans] == [
        ("Headake", "headache", ("HP:1",)),
        ("dizzyness", "dizziness", ("HP:2",)),
        ("fatique", "fatigue", ("HP:5",)),
        ("atacxia", "ataxia", ("HP:7",)),
    ]
    assert all(text[s.start : s.end] == s.text for s in spans)
    assert DictionaryDetector(detector.compiled).detect(text) == []  # without: none found


def test_a_correct_name_has_no_query(detector: FuzzyDictionaryDetector) -> None:
    assert [(s.text, s.query) for s in detector.detect("Erythema migrans.")] == [
        ("Erythema migrans", "")
    ]


def test_the_normalizer_searches_the_correction_and_the_annotation_names_it(
    index_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tiny index's random encoder gives 'migrane' no candidate at min_score 0.99; its
    correction 'migraine' is a name, so the span is annotated, its provenance saying so."""
    monkeypatch.setenv("TERMNORM_CACHE", str(tmp_path / "cache"))
    plain = DictionaryDetector.from_names([("T:0005", "migraine")])
    fuzzy = FuzzyDictionaryDetector(
        plain, SpellingCorrector(["migraine"], plain.compiled.vocab, ENGLISH)
    )
    spec = PipelineSpec(index=index_dir, min_score=0.99)
    text = "History of migrane."
    assert Annotator(spec, detectors=[plain]).annotate(text) == []
    (found,) = Annotator(spec, detectors=[fuzzy]).annotate(text)
    assert (found.text, found.start, found.end, found.concept_id) == ("migrane", 11, 18, "T:0005")
    assert (found.expanded_from, found.expansion, found.expansion_source) == (
        "migrane",
        "migraine",
        "spelling",
    )


def test_the_spec_option_switches_it(
    index_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("spellchecker")
    monkeypatch.setenv("TERMNORM_CACHE", str(tmp_path / "cache"))
    search = PipelineSpec(index=index_dir)
    off = dictionary_of_spec(AnnotateSpec(search=search), DetectorSource())
    on = dictionary_of_spec(AnnotateSpec(search=search, spelling=True), DetectorSource())
    assert not isinstance(off, FuzzyDictionaryDetector)
    assert isinstance(on, FuzzyDictionaryDetector)
    assert on is dictionary_of_spec(AnnotateSpec(search=search, spelling=True), DetectorSource())
    assert [(s.text, s.query) for s in on.detect("Bronchial asthmma.")] == [
        ("Bronchial asthmma", "Bronchial asthma")
    ]
    assert AnnotateSpec.from_dict({"spelling": "true"}).spelling is True


def test_without_the_word_list_the_extra_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "spellchecker", None)
    english_words.cache_clear()
    try:
        with pytest.raises(MissingExtraError, match=r"termnorm\[spelling\]"):
            english_words()
    finally:
        english_words.cache_clear()
