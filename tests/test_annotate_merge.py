"""The union of detectors' spans: identical, partial, nested, touching and chained overlaps."""

from __future__ import annotations

import pytest

from termnorm.annotate.merge import join_detectors, merge_spans
from termnorm.annotate.spans import Span

TEXT = "Patient has chest pain radiating to the left arm."


def _span(start: int, end: int, detector: str, *ids: str) -> Span:
    return Span(start, end, TEXT[start:end], detector, ids)


CHEST_PAIN = (12, 22)  # "chest pain"
PAIN_RADIATING = (18, 32)  # "pain radiating"
LEFT_ARM = (40, 48)  # "left arm"


def test_identical_spans_become_one_with_both_detectors_and_the_union_of_ids() -> None:
    tagger = _span(*CHEST_PAIN, "tagger")
    dictionary = _span(*CHEST_PAIN, "dictionary", "HP:0100749", "D002637")
    other = _span(*CHEST_PAIN, "dictionary", "D002637", "HP:0000001")
    merged = merge_spans([tagger, dictionary, other])
    assert merged == [
        Span(12, 22, "chest pain", "dictionary+tagger", ("HP:0100749", "D002637", "HP:0000001"))
    ]


def test_detector_names_are_joined_in_a_fixed_order_whatever_the_input_order() -> None:
    assert join_detectors(["tagger", "dictionary"]) == "dictionary+tagger"
    assert join_detectors(["zeta", "dictionary+tagger", "alpha", "tagger"]) == (
        "dictionary+tagger+alpha+zeta"
    )
    assert merge_spans([_span(*LEFT_ARM, "tagger"), _span(*LEFT_ARM, "dictionary")]) == [
        _span(*LEFT_ARM, "dictionary+tagger")
    ]


def test_partial_overlap_of_one_detector_keeps_the_longer() -> None:
    shorter = _span(*CHEST_PAIN, "tagger")
    longer = _span(*PAIN_RADIATING, "tagger")
    assert merge_spans([shorter, longer]) == [longer]


def test_a_dictionary_span_wins_over_a_longer_tagger_span_it_overlaps() -> None:
    named = _span(*CHEST_PAIN, "dictionary", "D002637")
    partial = _span(*PAIN_RADIATING, "tagger")
    outer = _span(12, 32, "tagger")  # "chest pain radiating": nests "chest pain"
    apart = _span(*LEFT_ARM, "tagger")  # overlaps no dictionary span: the tagger adds it
    assert merge_spans([partial, outer, named, apart]) == [named, apart]


def test_a_span_both_detectors_found_ranks_as_the_dictionarys() -> None:
    both = _span(*PAIN_RADIATING, "dictionary+tagger", "X:1")
    longer = _span(12, 32, "tagger")
    assert merge_spans([longer, both]) == [both]


def test_partial_overlap_of_equal_length_keeps_the_one_with_concept_ids() -> None:
    tagged = _span(12, 22, "dictionary")  # "chest pain", no ids
    named = _span(18, 28, "dictionary", "X:1")  # "pain radia": same length, later start
    assert merge_spans([tagged, named]) == [named]


def test_partial_overlap_of_equal_length_and_ids_keeps_the_earlier_start() -> None:
    early = _span(12, 22, "tagger")
    late = _span(18, 28, "tagger")
    assert merge_spans([late, early]) == [early]


def test_nested_spans_of_one_detector_keep_the_outer_even_without_ids() -> None:
    inner = _span(18, 22, "dictionary", "HP:0012531")  # "pain"
    outer = _span(*CHEST_PAIN, "dictionary")
    assert merge_spans([inner, outer]) == [outer]


def test_touching_spans_both_stay_and_the_result_is_sorted_by_start() -> None:
    arm = _span(*LEFT_ARM, "dictionary", "X:2")
    chest = _span(12, 17, "tagger")  # "chest"
    pain = _span(17, 22, "dictionary", "X:3")  # " pain": touches "chest"
    assert merge_spans([arm, pain, chest]) == [chest, pain, arm]


def test_a_chain_keeps_the_longest_and_what_it_does_not_overlap() -> None:
    a = _span(12, 32, "dictionary")  # "chest pain radiating": longest
    b = _span(23, 39, "dictionary", "X:4")  # "radiating to the": overlaps a
    c = _span(36, 48, "dictionary", "X:5")  # "the left arm": overlaps b only
    assert merge_spans([c, b, a]) == [a, c]


def test_no_spans_merge_to_none() -> None:
    assert merge_spans([]) == []


def test_spans_of_different_texts_at_the_same_offsets_are_refused() -> None:
    one = Span(0, 4, "pain", "dictionary")
    other = Span(0, 4, "ache", "tagger")
    with pytest.raises(ValueError, match=r"different texts .* merge only the spans of one text"):
        merge_spans([one, other])
