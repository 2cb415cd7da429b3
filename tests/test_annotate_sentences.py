"""Sentence boundaries over the original text: abbreviations, numbers, blank lines, and
exact offsets on hostile text."""

from __future__ import annotations

import pytest

from termnorm.annotate.sentences import sentence_spans


def _sentences(text: str) -> list[str]:
    return [text[start:end] for start, end in sentence_spans(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Pain began. It got worse!", ["Pain began.", "It got worse!"]),
        ("Is it MI? Maybe?! Then what...", ["Is it MI?", "Maybe?!", "Then what..."]),
        ("Dr. Smith saw her. She is well.", ["Dr. Smith saw her.", "She is well."]),
        ("Fever, e.g. High ones. Rest.", ["Fever, e.g. High ones.", "Rest."]),
        ("Drug vs. Placebo was run. Done.", ["Drug vs. Placebo was run.", "Done."]),
        ("Give 2.5 mg daily. Stop.", ["Give 2.5 mg daily.", "Stop."]),
        ("Signs, i.e. the rash, faded. Good.", ["Signs, i.e. the rash, faded.", "Good."]),
        ("Seen in E. coli cultures. Also here.", ["Seen in E. coli cultures.", "Also here."]),
        ("approx. three days. Next.", ["approx. three days.", "Next."]),
        ('He said "stop." Then left.', ['He said "stop."', "Then left."]),
        ("Smith et al. Reported it. Yes.", ["Smith et al. Reported it.", "Yes."]),
        ("Done etc. Next one.", ["Done etc.", "Next one."]),
        ("No space.After period.", ["No space.After period."]),
        ("1. Chest pain\n2. Dyspnea", ["1. Chest pain\n2. Dyspnea"]),
        ("She was 45. He was 50.", ["She was 45.", "He was 50."]),
    ],
)
def test_terminal_punctuation_and_its_exceptions(text: str, expected: list[str]) -> None:
    assert _sentences(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Chest pain\n\nNo fever", ["Chest pain", "No fever"]),
        ("Chest pain\r\n\r\nNo fever", ["Chest pain", "No fever"]),
        ("Chest pain\r\rNo fever", ["Chest pain", "No fever"]),
        ("Chest pain\n \t\n\n No fever", ["Chest pain", "No fever"]),
        ("Chest pain\u2029\u2029No fever", ["Chest pain", "No fever"]),
        ("Chest pain\nradiating to the arm", ["Chest pain\nradiating to the arm"]),
        ("Chest pain\r\nradiating", ["Chest pain\r\nradiating"]),
    ],
)
def test_blank_lines_end_a_sentence_and_one_line_break_does_not(
    text: str, expected: list[str]
) -> None:
    assert _sentences(text) == expected


@pytest.mark.parametrize("text", ["", " ", "\r\n\r\n", "\t\u00a0\n \u2029"])
def test_whitespace_only_has_no_sentences(text: str) -> None:
    assert sentence_spans(text) == []


def test_offsets_are_code_points_of_the_original_hostile_text() -> None:
    text = (
        "\u00a0 Caf\u00e9 e\u0301tude \U0001f642.\u00a0Next\u200dword 👩\u200d⚕️ here!\r\n\r\n"
        "\tTabbed line.\r\nSame sentence? Yes."
    )
    spans = sentence_spans(text)
    assert [text[start:end] for start, end in spans] == [
        "Caf\u00e9 e\u0301tude \U0001f642.",
        "Next\u200dword 👩\u200d⚕️ here!",
        "Tabbed line.",
        "Same sentence?",
        "Yes.",
    ]
    assert spans[0] == (2, 16)  # NBSP and space before; "e\u0301" is two code points
    assert all(not text[start].isspace() and not text[end - 1].isspace() for start, end in spans)
