"""Windows on sentence boundaries, a detector run over them, a mention across a window edge
found once at exact offsets, and hostile text."""

from __future__ import annotations

import itertools

import pytest

from termnorm.annotate.merge import merge_spans
from termnorm.annotate.sentences import sentence_spans
from termnorm.annotate.spans import Span
from termnorm.annotate.windows import (
    DEFAULT_WINDOW_CHARS,
    Window,
    detect_in_windows,
    max_chars_for_tokens,
    text_windows,
)


class PhraseDetector:
    """Finds ``phrases`` in the text it is given, in their priority order: an occurrence is
    kept when it overlaps none kept before it (or always, with ``nested``). Records the
    texts it was given."""

    def __init__(self, *phrases: str, name: str = "dictionary", nested: bool = False) -> None:
        self.name = name
        self.phrases = phrases
        self.nested = nested
        self.seen: list[str] = []

    def detect(self, text: str) -> list[Span]:
        self.seen.append(text)
        spans: list[Span] = []
        for phrase in self.phrases:
            start = text.find(phrase)
            while start >= 0:
                end = start + len(phrase)
                if self.nested or all(end <= k.start or k.end <= start for k in spans):
                    spans.append(Span(start, end, phrase, self.name, (f"C:{phrase}",)))
                start = text.find(phrase, start + 1)
        return sorted(spans)


# "chest" ends at 40, the first window's limit, so a 40-character window cuts "chest pain"
STRADDLE = "filler " * 5 + "chest pain and then more filler words follow here"


def test_a_mention_across_a_window_edge_is_found_once_at_exact_offsets() -> None:
    windows = text_windows(STRADDLE, 40, overlap_chars=12)
    start = STRADDLE.index("chest pain")
    assert windows[0].start <= start < windows[0].end < start + len("chest pain")
    detector = PhraseDetector("chest pain", "chest")
    assert detector.detect(STRADDLE[windows[0].start : windows[0].end])[-1].text == "chest"

    spans = detect_in_windows(STRADDLE, detector, max_chars=40, overlap_chars=12)

    assert spans == [Span(start, start + 10, "chest pain", "dictionary", ("C:chest pain",))]


def test_a_longer_span_cut_by_a_window_edge_loses_to_one_seen_whole() -> None:
    windows = text_windows(STRADDLE, 40, overlap_chars=12)
    assert windows[0].end == STRADDLE.index(" pain")  # the first window ends after "chest"
    # the first window sees "filler chest" (12 characters, at its edge), the second the
    # whole "chest pain" (10 characters): the longer one is the truncated one
    detector = PhraseDetector("chest pain", "filler chest")
    spans = detect_in_windows(STRADDLE, detector, max_chars=40, overlap_chars=12)
    assert [(s.start, s.text) for s in spans] == [(35, "chest pain")]


def test_a_mention_in_the_shared_sentence_is_found_once() -> None:
    text = "Alpha has a fever. Beta has chest pain. Gamma is well. Delta is fine too."
    windows = text_windows(text, 40)
    shared = [w for w in windows if text[w.start : w.end].count("chest pain") == 1]
    assert len(shared) == 2  # both windows see the sentence whole
    detector = PhraseDetector("chest pain", "fever", "fine")
    spans = detect_in_windows(text, detector, max_chars=40)
    assert [(s.start, s.end, s.text) for s in spans] == [
        (12, 17, "fever"),
        (28, 38, "chest pain"),
        (64, 68, "fine"),
    ]
    assert len(detector.seen) == len(windows) >= 3


def test_a_mention_across_a_sentence_boundary_is_whole_in_the_overlapping_window() -> None:
    text = "Alpha has one. Beta has two. Gamma has three. Delta has four."
    start = text.index("two. Gamma")
    assert text_windows(text, 30)[0].end < start + len("two. Gamma")  # cut by window one
    spans = detect_in_windows(text, PhraseDetector("two. Gamma"), max_chars=30)
    assert [(s.start, s.end, s.text) for s in spans] == [(start, start + 10, "two. Gamma")]
    unshared = detect_in_windows(
        text, PhraseDetector("two. Gamma"), max_chars=30, overlap_sentences=0
    )
    assert unshared == []  # what the overlap of one sentence is for


def test_nested_spans_of_one_window_stay_and_are_found_once_across_windows() -> None:
    text = "Alpha has a fever. Beta has chest pain. Gamma is well. Delta is fine too."
    detector = PhraseDetector("chest pain", "pain", nested=True)
    spans = detect_in_windows(text, detector, max_chars=40)
    assert [(s.start, s.text) for s in spans] == [(28, "chest pain"), (34, "pain")]
    assert sum(seen.count("chest pain") for seen in detector.seen) == 2


def test_windows_are_whole_sentences_that_overlap_by_one() -> None:
    text = " ".join(f"Sentence number {n} is here." for n in range(12))
    sentences = sentence_spans(text)
    windows = text_windows(text, 90)
    assert len(windows) > 2
    starts = {start for start, _ in sentences}
    ends = {end for _, end in sentences}
    for window in windows:
        assert window.end - window.start <= 90
        assert window.start in starts and window.end in ends
    for before, after in itertools.pairwise(windows):
        last = max(s for s in sentences if s[1] == before.end)
        assert after.start == last[0]  # the next window repeats the last sentence
    assert windows[0].start == 0 and windows[-1].end == len(text)


def test_no_overlap_asked_gives_windows_that_touch_no_sentence_twice() -> None:
    text = " ".join(f"Sentence number {n} is here." for n in range(12))
    windows = text_windows(text, 90, overlap_sentences=0)
    for before, after in itertools.pairwise(windows):
        assert before.end < after.start


def test_a_sentence_longer_than_a_window_is_cut_on_whitespace_with_overlap() -> None:
    text = " ".join(f"word{n}" for n in range(60))
    windows = text_windows(text, 50, overlap_chars=12)
    assert len(windows) > 5
    for window in windows:
        assert window.end - window.start <= 50
        assert window.start == 0 or text[window.start - 1] == " "
        assert window.end == len(text) or text[window.end] == " "
    for before, after in itertools.pairwise(windows):
        assert before.end - 12 <= after.start < before.end  # they overlap, by <= 12 chars


def test_a_hard_cut_never_separates_a_combining_mark_from_its_letter() -> None:
    text = "x" * 49 + "e\u0301" + "y" * 60
    windows = text_windows(text, 50)
    assert windows[0] == Window(0, 49)
    assert text[windows[1].start : windows[1].start + 2] == "e\u0301"
    assert "".join(text[w.start : w.end] for w in windows) == text  # no overlap in a token


HOSTILE = (
    "Caf\u00e9 chest\u00a0pain \U0001f642 today.\r\n"
    "e\u0301tude of 👩\u200d⚕️ nurse\tnotes.\r\n\r\n"
    "\tAnother chest\u00a0pain line with \U0001f642 again.  Final e\u0301tude."
)


@pytest.mark.parametrize("max_chars", [20, 35, 60, DEFAULT_WINDOW_CHARS])
def test_offsets_are_exact_on_hostile_text(max_chars: int) -> None:
    phrases = ("chest\u00a0pain", "\U0001f642", "e\u0301tude", "👩\u200d⚕️ nurse", "notes")
    spans = detect_in_windows(HOSTILE, PhraseDetector(*phrases), max_chars=max_chars)
    for span in spans:
        assert HOSTILE[span.start : span.end] == span.text
    expected = sorted(
        (start, phrase)
        for phrase in phrases
        for start in range(len(HOSTILE))
        if HOSTILE.startswith(phrase, start)
    )
    assert [(s.start, s.text) for s in spans] == expected
    for window in text_windows(HOSTILE, max_chars):
        assert window.end - window.start <= max_chars
        assert not HOSTILE[window.start].isspace() and not HOSTILE[window.end - 1].isspace()


def test_two_detectors_over_windows_merge_at_exact_offsets_on_hostile_text() -> None:
    dictionary = PhraseDetector("chest\u00a0pain", "e\u0301tude")
    tagger = PhraseDetector("chest\u00a0pain", "\U0001f642", name="tagger")
    spans = merge_spans(
        detect_in_windows(HOSTILE, dictionary, max_chars=35)
        + detect_in_windows(HOSTILE, tagger, max_chars=35)
    )
    assert [(s.text, s.detector) for s in spans] == [
        ("chest\u00a0pain", "dictionary+tagger"),
        ("\U0001f642", "tagger"),
        ("e\u0301tude", "dictionary"),
        ("chest\u00a0pain", "dictionary+tagger"),
        ("\U0001f642", "tagger"),
        ("e\u0301tude", "dictionary"),
    ]
    assert all(HOSTILE[s.start : s.end] == s.text for s in spans)


@pytest.mark.parametrize("text", ["", "   ", "\r\n\r\n\t\u00a0 \u2028"])
def test_whitespace_only_text_has_no_windows_and_no_spans(text: str) -> None:
    detector = PhraseDetector(" ")
    assert text_windows(text) == []
    assert detect_in_windows(text, detector) == []
    assert detector.seen == []


def test_a_short_text_is_one_window_without_its_outer_whitespace() -> None:
    text = "\r\n  Patient denies chest pain.\u00a0\n"
    assert text_windows(text) == [Window(4, 30)]


class ShiftingDetector:
    """Reports its spans one character off: a broken detector."""

    name = "broken"

    def detect(self, text: str) -> list[Span]:
        return [Span(1, 5, text[:4], self.name)]


def test_a_detector_that_reports_wrong_offsets_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match=r"detector 'broken' reported 'Ches' .* must report"):
        detect_in_windows("Chest pain.", ShiftingDetector())


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"max_chars": 0}, r"max_chars must be at least 1, got 0"),
        ({"overlap_sentences": -1}, r"overlap_sentences must be 0 or more, got -1"),
        ({"max_chars": 10, "overlap_chars": 10}, r"overlap_chars must be .* less than max_chars"),
        ({"overlap_chars": -1}, r"overlap_chars must be at least 0"),
    ],
)
def test_bad_sizes_are_refused(kwargs: dict[str, int], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        text_windows("Chest pain.", **kwargs)


def test_the_default_window_fits_a_512_token_encoder() -> None:
    assert DEFAULT_WINDOW_CHARS == max_chars_for_tokens(512) == 1020
    with pytest.raises(ValueError, match="max_tokens must exceed 2"):
        max_chars_for_tokens(2)
