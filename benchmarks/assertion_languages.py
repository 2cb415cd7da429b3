"""Assertion rules per language: precision and recall of each flag on hand-made sentences.

Two sets of sentences, one mention each, with the flags it should get:

* ``tuned``: ``tests/data/assertion_sentences.tsv``, the sentences the rules were written
  against (the tests require every one of them, so its figures are 1.0 by construction);
* ``held-out``: ``benchmarks/assertion_heldout.tsv``, written after the rules and not used
  to tune them.

Each mention goes through :func:`termnorm.annotate.assertion.assert_spans` twice: with the
rules of the language :func:`~termnorm.annotate.languages.choose_language` detects from the
sentence alone (what ``--language auto`` does for a one-sentence document), and with the
rules of the sentence's real language (declared). Per language and flag: precision and
recall over the mentions (``-`` where a flag has no true and no predicted mention), and how
often detection chose the right language. No model is needed; it runs in a second.

Usage (from the repo root)::

    python benchmarks/assertion_languages.py
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from termnorm.annotate.assertion import assert_spans
from termnorm.annotate.assertion_rules import AssertionRules
from termnorm.annotate.languages import choose_language
from termnorm.annotate.spans import Span

ROOT = Path(__file__).resolve().parent.parent
SETS = {
    "tuned": ROOT / "tests" / "data" / "assertion_sentences.tsv",
    "held-out": ROOT / "benchmarks" / "assertion_heldout.tsv",
}
FLAGS = ("negated", "hypothetical", "historical", "family")
Row = tuple[str, str, str, frozenset[str]]


def read_sentences(path: Path) -> list[Row]:
    """``(language, sentence, mention, flags)`` per row of a sentence TSV."""
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#") or line.startswith("lang\t"):
            continue
        lang, sentence, mention, flags = line.split("\t")
        rows.append(
            (lang, sentence, mention, frozenset() if flags == "-" else frozenset(flags.split(",")))
        )
    return rows


def predicted(sentence: str, mention: str, rules: AssertionRules) -> frozenset[str]:
    """The flags the rules give ``mention`` (its first occurrence) in ``sentence``."""
    start = sentence.index(mention)
    span = Span(start, start + len(mention), mention, "bench", ())
    (found,) = assert_spans(sentence, [span], rules)
    return frozenset(name for name, on in found.as_dict().items() if on)


def _ratio(good: int, total: int) -> str:
    return "-" if total == 0 else f"{good / total:.2f}"


def table(rows: list[Row], detect: bool) -> list[str]:
    """Markdown rows: per language, P/R of each flag, and the detection accuracy."""
    counts: Counter[tuple[str, str, str]] = Counter()
    right_language: Counter[str] = Counter()
    for lang, sentence, mention, gold in rows:
        chosen = choose_language(sentence).language.value
        right_language[lang] += chosen == lang
        got = predicted(sentence, mention, AssertionRules.for_language(chosen if detect else lang))
        for flag in FLAGS:
            kind = (
                ("tp" if flag in gold else "fp") if flag in got else ("fn" if flag in gold else "")
            )
            if kind:
                counts[lang, flag, kind] += 1
    langs = sorted(
        {row[0] for row in rows}, key=lambda code: ["en", "fr", "de", "es", "nl"].index(code)
    )
    lines = []
    for lang in langs:
        n = sum(1 for row in rows if row[0] == lang)
        cells = []
        for flag in FLAGS:
            tp, fp, fn = (counts[lang, flag, kind] for kind in ("tp", "fp", "fn"))
            cells.append(f"{_ratio(tp, tp + fp)} / {_ratio(tp, tp + fn)}")
        lines.append(f"| {lang} | {n} | {' | '.join(cells)} | {right_language[lang]}/{n} |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.parse_args()
    header = (
        "| lang | sentences | " + " | ".join(f"{f} P / R" for f in FLAGS) + " | language detected |"
    )
    rule = "|" + "---|" * (len(FLAGS) + 3)
    for name, path in SETS.items():
        rows = read_sentences(path)
        for detect in (False, True):
            how = "rules of the language detected per sentence" if detect else "declared language"
            print(f"\n{name} sentences, {how}\n\n{header}\n{rule}")
            print("\n".join(table(rows, detect)))


if __name__ == "__main__":
    main()
