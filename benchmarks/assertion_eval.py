"""Assertion flags before and after a change of the rules, in one run.

Two measures, each with the rules of a git revision (``--before``, default the commit before
issue 54's hedges and post-modifiers) and with the working tree's rules (after):

* **notes**: precision and recall of each flag on hand-made clinical-note sentences
  (``benchmarks/assertion_notes.tsv``, one mention a row, the gold flags written by hand);
* **corpora**: NCBI-disease devel and GSC+ dev carry no assertion label, so only the share
  of gold mentions each flag marks is reported, with ``--sample N`` flagged mentions (after)
  printed in their sentence for a hand check.

No model is needed; it runs in seconds. Usage (from the repo root)::

    python benchmarks/assertion_eval.py [--shared ../shared/benchmarks] [--sample 30]
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from termnorm.annotate.assertion import assert_spans
from termnorm.annotate.assertion_rules import AssertionRules, default_rules_path
from termnorm.annotate.sentences import sentence_spans
from termnorm.annotate.spans import Span
from termnorm.mentions.documents import read_documents
from termnorm.mentions.reader import read_mentions

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the sentence reader and flag function
from assertion_languages import FLAGS, Row, predicted, read_sentences

ROOT = Path(__file__).resolve().parent.parent
NOTES = ROOT / "benchmarks" / "assertion_notes.tsv"
BEFORE = "15c2a46140960845762202909e36c445cbe59d6e"
"""The commit before issue 54's hedge and post-modifier rules."""
CORPORA = {
    "ncbi_devel": "ncbi_disease/NCBIdevelopset_corpus.txt",
    "gscplus_dev": "hpo_gscplus/GSCplus_dev_gold.tsv",
}


def rules_at(revision: str) -> AssertionRules:
    """The English rules of ``revision`` (``git show``); ``SystemExit`` naming it if absent."""
    path = default_rules_path().relative_to(ROOT / "src").as_posix()
    shown = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{revision}:src/{path}"],
        capture_output=True,
        text=True,
        check=False,
    )
    if shown.returncode != 0:
        raise SystemExit(f"cannot read the rules of {revision!r}: {shown.stderr.strip()}")
    with tempfile.TemporaryDirectory() as folder:
        file = Path(folder) / "rules.tsv"
        file.write_text(shown.stdout, encoding="utf-8")
        return AssertionRules.from_file(file)


def scores(rows: list[Row], rules: AssertionRules) -> dict[str, tuple[int, int, int]]:
    """``flag -> (true positives, false positives, false negatives)`` over the rows."""
    counts: Counter[tuple[str, str]] = Counter()
    for _, sentence, mention, gold in rows:
        got = predicted(sentence, mention, rules)
        for flag in FLAGS:
            counts[flag, "tp"] += flag in got and flag in gold
            counts[flag, "fp"] += flag in got and flag not in gold
            counts[flag, "fn"] += flag in gold and flag not in got
    return {flag: (counts[flag, "tp"], counts[flag, "fp"], counts[flag, "fn"]) for flag in FLAGS}


def _ratio(good: int, total: int) -> str:
    return "-" if total == 0 else f"{good / total:.2f}"


def notes_table(rows: list[Row], runs: dict[str, AssertionRules]) -> list[str]:
    """Markdown rows: per rule set, P / R of each flag (``-`` where nothing counts)."""
    lines = ["| rules | " + " | ".join(f"{f} P / R" for f in FLAGS) + " |"]
    lines.append("|" + "---|" * (len(FLAGS) + 1))
    for name, rules in runs.items():
        cells = [
            f"{_ratio(tp, tp + fp)} / {_ratio(tp, tp + fn)}"
            for tp, fp, fn in scores(rows, rules).values()
        ]
        lines.append(f"| {name} | {' | '.join(cells)} |")
    return lines


Flagged = tuple[str, str, str, frozenset[str]]  # (corpus, sentence, mention, flags)


def corpus_flags(path: Path, rules: AssertionRules) -> tuple[int, list[Flagged]]:
    """The number of gold mentions with offsets, and the flagged ones with their sentence."""
    texts = read_documents(path)
    by_doc: dict[str, list[Span]] = {}
    for m in read_mentions(path):
        if m.start is not None and m.end is not None:
            text = texts[m.doc_id][m.start : m.end]
            by_doc.setdefault(m.doc_id, []).append(Span(m.start, m.end, text, "gold", ()))
    flagged = []
    for doc_id, spans in by_doc.items():
        text = texts[doc_id]
        sentences = sentence_spans(text)
        for span, found in zip(spans, assert_spans(text, spans, rules, sentences), strict=True):
            on = frozenset(name for name, value in found.as_dict().items() if value)
            if on:
                a, b = next((a, b) for a, b in sentences if a <= span.start < b)
                flagged.append((path.name, text[a:b].strip(), span.text, on))
    return sum(map(len, by_doc.values())), flagged


def corpus_table(
    shared: Path, runs: dict[str, AssertionRules]
) -> tuple[list[str], dict[str, list[Flagged]]]:
    """Markdown rows: per corpus and rule set, the share of gold mentions each flag marks;
    and the flagged mentions of each rule set."""
    lines = ["| corpus | rules | mentions | " + " | ".join(FLAGS) + " |"]
    lines.append("|" + "---|" * (len(FLAGS) + 3))
    flagged: dict[str, list[Flagged]] = {name: [] for name in runs}
    for corpus, relative in CORPORA.items():
        for name, rules in runs.items():
            total, found = corpus_flags(shared / relative, rules)
            flagged[name] += found
            share = Counter(flag for *_, on in found for flag in on)
            cells = [f"{share[f]} ({share[f] / total:.1%})" for f in FLAGS]
            lines.append(f"| {corpus} | {name} | {total} | {' | '.join(cells)} |")
    return lines, flagged


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", default=BEFORE, help="git revision of the rules before")
    parser.add_argument("--shared", type=Path, default=Path("../shared/benchmarks"))
    parser.add_argument("--sample", type=int, default=30, help="flagged mentions to print")
    args = parser.parse_args()
    runs = {"before": rules_at(args.before), "after": AssertionRules.default()}
    rows = read_sentences(NOTES)
    print(f"\nHand-made note sentences ({len(rows)} mentions)\n")
    print("\n".join(notes_table(rows, runs)))
    lines, flagged = corpus_table(args.shared, runs)
    print("\nGold mentions flagged (no gold assertion labels in these corpora)\n")
    print("\n".join(lines))
    after, before = flagged["after"], set(flagged["before"])
    print("\nFlagged mentions that the change of rules gives or changes\n")
    _show(found for found in after if found not in before)
    print(f"\n{args.sample} flagged mentions (after), seeded sample, for a hand check\n")
    _show(random.Random(0).sample(after, min(args.sample, len(after))))


def _show(flagged: Iterable[Flagged]) -> None:
    for corpus, sentence, mention, on in flagged:
        print(f"- [{corpus}] {mention!r} {sorted(on)}: {sentence}")


if __name__ == "__main__":
    main()
