"""MTCG (multi-task candidate generator) on NCBI-disease devel: the MTCG paper's Tables 6, 7, 8.

Liang, Xue & Ruan 2021 report recall@k of the candidate generator (Table 7), the candidate
generator trained with each negative strategy (Table 6) and the implication-number accuracy
(Table 8). Here, NCBI-disease devel mentions (unlinkable ones left out) against MEDIC:

* **Table 7**: recall@1/5/10/20/50 of the base index (all-MiniLM-L6-v2) and of the MTCG model's
  index, each searched as O-T (ontology terms only) and as D-T + OD-T (NCBI train mentions as
  domain synonyms, today's best configuration).
* **Table 6**: recall@k (O-T) of the MTCG index trained with each strategy
  (``--strategy NAME=IDX``, repeated; indexes built from equal-budget runs).
* **Table 8**: the MTCG model's implication-number accuracy per class (gold code count 1, 2,
  ≥3) on the same mentions.

A mention is recalled at k when every gold code is among its first k concepts (IDs compared
with the concept's alternative IDs, :mod:`termnorm.evaluation.multi_code`); *simple* rows are
the one-code mentions only, *all* rows pool simple and composite mentions. Torch runs on one
thread (shared machine).

Usage (from the repo root; indexes built with ``termnorm index build --kg KG --model MODEL``)::

    python benchmarks/mtcg.py --model runs/mtcg/model_online --mtcg-index runs/mtcg/idx_online \
        [--base-index IDX] [--strategy random=IDX ...] [--json runs/mtcg.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from termnorm import api
from termnorm.encoders.implication import load_implication_predictor
from termnorm.evaluation.multi_code import RECALL_KS, implication_accuracy, recall_at_k
from termnorm.kg.ids import id_key
from termnorm.mentions import Mention, MentionKind, read_mentions
from termnorm.search.candidate import Matcher

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT.parent / "shared" / "benchmarks"
NCBI_DEV = BENCH / "ncbi_disease" / "NCBIdevelopset_corpus.txt"
NCBI_TRAIN = BENCH / "ncbi_disease" / "NCBItrainset_corpus.txt"
BASE_INDEX = ROOT.parent / "runs" / "after" / "idx" / "medic"


def recall_rows(name: str, matcher: Matcher, mentions: Sequence[Mention]) -> dict[str, Any]:
    """recall@k (%) of all linkable mentions and of the simple ones, with the seconds taken."""
    t0 = time.perf_counter()
    distinct = sorted({m.text for m in mentions})
    ranked = dict(zip(distinct, matcher.normalize_batch(distinct, k=max(RECALL_KS)), strict=True))
    table: dict[str, frozenset[str]] = {}

    def keys(concept_id: str) -> frozenset[str]:
        if concept_id not in table:
            ids = [concept_id, *matcher.alt_ids(concept_id)]
            table[concept_id] = frozenset(id_key(x) for x in ids)
        return table[concept_id]

    lists = [[c.concept_id for c in ranked[m.text]] for m in mentions]
    gold = [list(m.gold_ids) for m in mentions]
    simple = [m.kind is MentionKind.SIMPLE for m in mentions]
    every = recall_at_k(lists, gold, RECALL_KS, keys)
    one = recall_at_k(
        [x for x, s in zip(lists, simple, strict=True) if s],
        [g for g, s in zip(gold, simple, strict=True) if s],
        RECALL_KS,
        keys,
    )
    row = {
        "setting": name,
        "all": {k: round(100 * v, 2) for k, v in every.items()},
        "simple": {k: round(100 * v, 2) for k, v in one.items()},
        "mentions": len(mentions),
        "simple_mentions": sum(simple),
        "seconds": round(time.perf_counter() - t0, 1),
    }
    cells = " | ".join(f"{row['all'][f'recall@{k}']:.1f}" for k in RECALL_KS)
    cells_simple = " | ".join(f"{row['simple'][f'recall@{k}']:.1f}" for k in RECALL_KS)
    print(f"| {name} (all) | {cells} |\n| {name} (simple) | {cells_simple} |", flush=True)
    return row


def implication_table(model: Path, mentions: Sequence[Mention]) -> dict[str, float]:
    """Table 8: the model's implication numbers against the gold code counts."""
    predictor = load_implication_predictor(model, device="cpu")
    predicted = predictor.predict([m.text for m in mentions])
    out = implication_accuracy(predicted.tolist(), [len(m.gold_ids) for m in mentions])
    print("| class | n | accuracy |\n|---|---|---|")
    for cls, label in ((1, "1 (uni)"), (2, "2"), (3, "≥3")):
        n = int(out[f"implication_n_{cls}"])
        acc = out.get(f"implication_{cls}")
        print(f"| {label} | {n} | {'—' if acc is None else f'{100 * acc:.1f}'} |")
    for key in ("implication_multi", "implication_total"):
        if key in out:
            print(f"| {key.split('_')[1]} | | {100 * out[key]:.1f} |")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, help="MTCG model folder (Table 8)")
    parser.add_argument("--mtcg-index", type=Path, help="MEDIC index built with --model")
    parser.add_argument("--base-index", type=Path, default=BASE_INDEX)
    parser.add_argument(
        "--strategy", action="append", default=[], help="NAME=IDX: Table 6 row (repeatable)"
    )
    parser.add_argument("--no-base", action="store_true", help="skip the base index rows")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    dev = [m for m in read_mentions(NCBI_DEV) if m.kind is not MentionKind.UNLINKABLE]
    report: dict[str, Any] = {"dev": str(NCBI_DEV), "ks": list(RECALL_KS), "table7": []}
    header = "| setting | " + " | ".join(f"R@{k}" for k in RECALL_KS) + " |"
    rule = "|---|" + "---|" * len(RECALL_KS)
    print(f"Table 7: recall@k, NCBI devel vs MEDIC\n{header}\n{rule}")
    indexes = [] if args.no_base else [("base", args.base_index)]
    if args.mtcg_index is not None:
        indexes.append(("MTCG", args.mtcg_index))
    for label, index in indexes:
        report["table7"].append(recall_rows(f"{label} O-T", api.get_normalizer(index), dev))
        strategy = api.get_strategy("d-t+od-t", index, synonyms=NCBI_TRAIN)
        report["table7"].append(recall_rows(f"{label} D-T+OD-T", strategy, dev))
    if args.strategy:
        print(f"\nTable 6: negative strategies, MTCG O-T recall@k\n{header}\n{rule}")
        report["table6"] = []
        for spec in args.strategy:
            name, _, index = spec.partition("=")
            report["table6"].append(recall_rows(name, api.get_normalizer(Path(index)), dev))
    if args.model is not None:
        print("\nTable 8: implication number, NCBI devel")
        report["table8"] = implication_table(args.model, dev)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
