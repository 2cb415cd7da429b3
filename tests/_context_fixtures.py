"""A tiny text corpus in which the cluster KG's terms (``_kge_fixtures``) occur."""

from __future__ import annotations

from pathlib import Path

LINES = [
    "The patient had cardio disorder 3 and lung problem 7.",
    "Skin problem 2 was seen. Also cardio problem 3 here.",
    "No skin disorder 11 or lung disorder 4 today.",
    "A lung problem 1 case. The cardio disorder 5 was mild.",
    "Skin problem 9 too. lung disorder 2 and cardio problem 8.",
    "Her skin disorder 2 grew. cardio disorder 8 came back.",
    "We saw lung disorder 7 and skin problem 11 again.",
    "Then cardio problem 5 and lung problem 4 were treated.",
]


def write_corpus(folder: Path) -> Path:
    """The corpus as a plain-text file (one document a line)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "corpus.txt"
    path.write_text("\n".join(LINES) + "\n")
    return path
