"""Short forms a document defines, found where it uses them when their long form is a mention."""

from __future__ import annotations

import pytest

from termnorm.annotate import DictionaryDetector, Span
from termnorm.annotate.short_forms import short_form_spans
from termnorm.errors import AbbreviationError

TEXT = (
    "We studied bipolar affective disorder (BPAD) in 40 families. "
    "BPAD patients had an earlier onset; anti-BPAD and BPADs are other words."
)


def test_each_whole_token_use_of_a_mention_short_form_is_a_span() -> None:
    pytest.importorskip("pyab3p")
    detector = DictionaryDetector.from_names([("D:1", "bipolar affective disorder")])
    spans = detector.detect(TEXT)
    added = short_form_spans(TEXT, spans)
    starts = [i for i in range(len(TEXT)) if TEXT.startswith("BPAD", i)]
    assert [(s.start, s.text, s.concept_ids, s.detector) for s in added] == [
        (starts[0], "BPAD", ("D:1",), "dictionary"),  # in the definition's parentheses
        (starts[1], "BPAD", ("D:1",), "dictionary"),  # "anti-BPAD" and "BPADs" are not it
    ]


def test_a_short_form_whose_long_form_is_no_mention_is_left_alone() -> None:
    pytest.importorskip("pyab3p")
    assert short_form_spans(TEXT, [Span(11, 18, "bipolar", "dictionary", ("D:2",))]) == []


def test_a_document_ab3p_cannot_read_gets_no_short_form(monkeypatch: pytest.MonkeyPatch) -> None:
    from termnorm.annotate import short_forms

    def crash(text: str) -> list[object]:
        raise AbbreviationError("Ab3P failed on this document")

    monkeypatch.setattr(short_forms, "detect_abbreviations", crash)
    spans = [Span(11, 37, "bipolar affective disorder", "dictionary", ("D:1",))]
    assert short_form_spans(TEXT, spans) == []


def test_the_spec_option_reaches_the_annotator() -> None:
    from termnorm.annotate.detectors import build_annotator
    from termnorm.annotate.spec import AnnotateSpec

    assert build_annotator(AnnotateSpec(short_forms=True)).short_forms is True
    assert build_annotator(AnnotateSpec()).short_forms is False  # measured, not kept
