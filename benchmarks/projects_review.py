"""A first look at learning from review: annotated mentions as a code list, a simulated
reviewer who picks the gold concept, re-mapping between rounds.

    python benchmarks/projects_review.py --index IDX --mentions FILE --format pubtator
                                         --work DIR [--rounds 3] [--per-round 100] [--json]

Each distinct mention text (simple mentions, one gold ID) is one code. The project is mapped
(``map run``), then per round the reviewer takes the next ``--per-round`` rows of the review
queue (frequency = the text's count, × uncertainty) and picks each row's gold concept; the
rows still to review are then re-mapped (``run_project(remap=True)``), so the picks count as
domain synonyms. Reported per round: accuracy@1 of the rows still to review (top candidate's
ID against the gold, compared as :func:`termnorm.kg.ids.id_key`), and map run's rows/s.
Indicative only: a mention text reviewed is never asked again, so the gain comes from other
texts close to the reviewed ones (a full study with curves and baselines is issue 33's
measurement).
"""

from __future__ import annotations

import argparse
import csv
import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

from sqlalchemy import select

from termnorm import api
from termnorm.kg.ids import id_key
from termnorm.mentions import read_mentions
from termnorm.projects import (
    PipelineSettings,
    decide,
    init_project,
    open_store,
    review_queue,
    run_project,
)
from termnorm.projects.models import CandidateRow, SourceRow
from termnorm.projects.store import Store


def code_list(mentions_path: Path, fmt: str, out: Path) -> dict[str, str]:
    """Write the code list (code, text, count) and return the gold ID per code."""
    mentions = [m for m in read_mentions(mentions_path, fmt) if len(m.gold_ids) == 1]
    counts = Counter(m.text for m in mentions)
    gold: dict[str, str] = {}
    with out.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["code", "text", "count"])
        for i, m in enumerate({m.text: m for m in mentions}.values()):
            code = f"M{i:05d}"
            gold[code] = m.gold_ids[0]
            writer.writerow([code, m.text, counts[m.text]])
    return gold


def open_accuracy(store: Store, gold: dict[str, str]) -> tuple[float, int]:
    """Accuracy@1 of the rows still to review, and how many there are."""
    with store.session() as session:
        rows = session.execute(
            select(SourceRow.code, CandidateRow.concept_id)
            .join(CandidateRow, CandidateRow.row_id == SourceRow.id)
            .where(SourceRow.state == "to_review", CandidateRow.rank == 1)
        ).all()
    hits = sum(id_key(cid) == id_key(gold[code]) for code, cid in rows)
    return (hits / len(rows) if rows else float("nan")), len(rows)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--mentions", type=Path, required=True)
    parser.add_argument("--format", default="pubtator")
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--per-round", type=int, default=100)
    parser.add_argument("--strategy", help="the project's strategy (default: the CLI's rule)")
    parser.add_argument(
        "--no-learning",
        action="store_true",
        help="re-map without the picks as synonyms (the baseline)",
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    gold = code_list(args.mentions, args.format, args.work / "codes.csv")
    db = str(args.work / f"review-{time.time_ns()}.db")
    store = open_store("review", db)
    settings = PipelineSettings.of(index=args.index, k=5, strategy=args.strategy)
    init_project(
        "review", args.work / "codes.csv", "code", "text", "count", settings=settings, db=store
    )
    start = time.perf_counter()
    run_project("review", api.project_matcher, db=store, show_progress=False)
    rows_per_s = len(gold) / (time.perf_counter() - start)
    accuracy, left = open_accuracy(store, gold)
    log: list[dict[str, Any]] = [
        {
            "decisions": 0,
            "open_rows": left,
            "open_acc@1": round(accuracy, 4),
            "run_rows_per_s": round(rows_per_s, 1),
        }
    ]
    decisions = 0
    for _ in range(args.rounds):
        for entry in review_queue("review", limit=args.per_round, db=store):
            decide(
                "review", entry.code, "pick", concept_id=gold[entry.code], reviewer="gold", db=store
            )
            decisions += 1
        start = time.perf_counter()
        report = run_project(
            "review", api.project_matcher, db=store, remap=True, show_progress=False
        )
        rows_per_s = report.remapped / (time.perf_counter() - start)
        accuracy, left = open_accuracy(store, gold)
        log.append(
            {
                "decisions": decisions,
                "open_rows": left,
                "open_acc@1": round(accuracy, 4),
                "synonyms": report.synonyms,
                "remap_rows_per_s": round(rows_per_s, 1),
            }
        )
    store.close()
    for line in log:
        print(json.dumps(line) if args.json else line)


if __name__ == "__main__":
    main()
