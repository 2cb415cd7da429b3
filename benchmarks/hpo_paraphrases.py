"""Rule-based paraphrases of HPO names as training texts (issue 3, a PhenoBERT experiment).

HPO names follow a few patterns ("Hypoplasia of the pelvis", "Absent toenail", "Abnormality of
the kidney"); clinical text phrases the same findings the other way round ("hypoplastic
pelvis", "absence of the toenails", "renal anomalies"). Each rule below rewrites one pattern;
a paraphrase is kept when it is not already a term of the KG and exactly one concept
produces it. The output is a ``concept<TAB>text`` file for
``termnorm train --train-data od --mentions FILE``. Usage (from the repo root)::

    python benchmarks/hpo_paraphrases.py runs/kgs/hpo_used runs/hpo_paraphrases.tsv

On ``hpo_used`` it writes 12,158 paraphrases of 2,649 concepts. Trained with them (domain share
0.25, 1,200 steps) PhenoBERT did not move (docs/training_results.md, "PhenoBERT stays tied").
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

MAX_WORDS = 4  # longer subjects read badly after reordering
# Patterns whose subject may not hold " of " ("Decreased size of the X" -> "low size of ...").
NO_OF = ("Increased", "Decreased", "Reduced", "Small", "Short")

RULES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Hypoplasia of (?:the )?(.+)", ("hypoplastic {}", "{} hypoplasia", "underdeveloped {}")),
    ("Hypoplastic (.+)", ("hypoplasia of the {}", "{} hypoplasia")),
    ("Aplasia of (?:the )?(.+)", ("absent {}", "absence of the {}", "{} aplasia", "agenesis of the {}")),
    ("Absent (.+)", ("absence of the {}", "{} absent", "aplasia of the {}", "lack of {}")),
    ("Abnormality of (?:the )?(.+)", ("{} abnormalities", "abnormal {}", "{} anomalies", "anomalies of the {}")),
    ("Abnormal (.+) morphology", ("abnormal {}", "{} anomalies", "malformed {}", "{} malformation")),
    ("Short (.+)", ("shortening of the {}", "shortened {}")),
    ("Small (.+)", ("hypoplastic {}", "reduced size of the {}")),
    ("Increased (.+)", ("elevated {}", "high {}")),
    ("Decreased (.+)", ("reduced {}", "low {}")),
    ("Reduced (.+)", ("decreased {}", "low {}")),
    ("Enlarged (.+)", ("enlargement of the {}", "large {}")),
    ("Thickened (.+)", ("thickening of the {}", "thick {}")),
    ("Thin (.+)", ("thinning of the {}",)),
)  # fmt: skip


def paraphrases(term: str) -> list[str]:
    """Lower-cased rewrites of ``term`` by every rule whose pattern matches all of it."""
    out: list[str] = []
    for pattern, templates in RULES:
        match = re.fullmatch(pattern, term, flags=re.IGNORECASE)
        if match is None:
            continue
        subject = match.group(1).lower()
        too_long = "," in subject or len(subject.split()) > MAX_WORDS
        if too_long or (pattern.startswith(NO_OF) and " of " in f" {subject} "):
            continue
        out += [t.format(subject) for t in templates]
    return out


def unambiguous_paraphrases(pairs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """``(concept, paraphrase)`` for ``(concept, term)`` pairs: new texts of one concept only."""
    known = {term.lower() for _, term in pairs}
    owners: dict[str, set[str]] = {}
    for concept, term in pairs:
        for text in paraphrases(term):
            if text not in known:
                owners.setdefault(text, set()).add(concept)
    return [(next(iter(ids)), text) for text, ids in owners.items() if len(ids) == 1]


def main(argv: list[str] | None = None) -> None:
    """Write the paraphrase file of a KG folder; print its counts as JSON."""
    from termnorm.kg import KnowledgeGraph

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("kg", type=Path, help="KG folder (termnorm kg build)")
    parser.add_argument("out", type=Path, help="concept<TAB>text file to write")
    args = parser.parse_args(argv)
    terms = KnowledgeGraph.load(args.kg).terms
    pairs = list(zip(terms["concept_id"], terms["term"], strict=True))
    rows = unambiguous_paraphrases(pairs)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("".join(f"{c}\t{t}\n" for c, t in rows))
    print(
        json.dumps(
            {"out": str(args.out), "texts": len(rows), "concepts": len({c for c, _ in rows})}
        )
    )


if __name__ == "__main__":
    main()
