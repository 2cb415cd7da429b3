"""What a mapping project's store costs around the search: init, run, decide, status, export
and apply on a synthetic code list, SQLite and (with ``--postgres URL``) PostgreSQL.

    python benchmarks/projects_store.py --rows 20000 --work DIR [--postgres URL] [--index IDX]
                                        [--decisions 500] [--json]

The list is ``--rows`` codes with seeded random texts. Without ``--index`` the search is an
instant fake (five fixed candidates per row), so ``run`` measures only the store: reading
batches, replacing candidates, the compare-and-set per row, a commit per 256 rows. With
``--index`` the search is ``termnorm.api.project_matcher`` over that index (the figure then
includes encoding). Each step is timed alone (wall time of the library call); ``decide``
opens the database per call as the CLI does, ``decide_open_store`` passes one open store as
a service would; ``apply``
changes 1 % of the texts, drops 1 % of the codes and adds 1 %.
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from termnorm import api
from termnorm.projects import (
    PipelineSettings,
    apply_source,
    decide,
    export,
    init_project,
    open_store,
    run_project,
    status,
)
from termnorm.search.candidate import Candidate, RowResult

WORDS = [
    "acute",
    "chronic",
    "serum",
    "plasma",
    "glucose",
    "sodium",
    "potassium",
    "left",
    "right",
    "lower",
    "upper",
    "pain",
]


class InstantMatcher:
    """Five fixed candidates per text, no search."""

    def normalize_rows(self, texts: Sequence[object], k: int = 5) -> list[RowResult]:
        return [
            RowResult(
                [Candidate(f"T:{i:04d}", f"c{i}", 1.0 / i, str(t), i) for i in range(1, k + 1)]
            )
            for t in texts
        ]


def write_list(path: Path, rows: list[tuple[str, str, int]]) -> Path:
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["code", "text", "count"])
        writer.writerows(rows)
    return path


def timed(step: str, results: dict[str, float], call: Any) -> Any:
    start = time.perf_counter()
    out = call()
    results[step] = round(time.perf_counter() - start, 3)
    return out


def bench(db: str, rows: int, work: Path, index: Path | None, decisions: int) -> dict[str, Any]:
    rng = random.Random(0)
    codes = [
        (f"C{i:07d}", " ".join(rng.choices(WORDS, k=3)) + f" {i}", rng.randint(1, 999))
        for i in range(rows)
    ]
    source = write_list(work / "v1.csv", codes)
    settings = PipelineSettings.of(index=index) if index else PipelineSettings()
    build = api.project_matcher if index else (lambda _s, _p: InstantMatcher())
    seconds: dict[str, float] = {}
    timed(
        "init",
        seconds,
        lambda: init_project("bench", source, "code", "text", "count", settings=settings, db=db),
    )
    timed("run", seconds, lambda: run_project("bench", build, db=db, show_progress=False))  # type: ignore[arg-type]
    picked = rng.sample(codes, decisions)
    timed(
        "decide",
        seconds,
        lambda: [decide("bench", c, "approve", reviewer="bench", db=db) for c, _t, _n in picked],
    )
    store = open_store("bench", db)  # a long-lived caller (a service) keeps one open store
    again = rng.sample(codes, decisions)
    timed(
        "decide_open_store",
        seconds,
        lambda: [decide("bench", c, "flag", reviewer="bench", db=store) for c, _t, _n in again],
    )
    store.close()
    timed("status", seconds, lambda: status("bench", db=db))
    timed("export_sssom", seconds, lambda: export("bench", "sssom", work / "out.sssom.tsv", db=db))
    timed("export_csv", seconds, lambda: export("bench", "csv", work / "out.csv", db=db))
    one = max(1, rows // 100)
    changed = [
        (c, t + " changed", n) if i < one else (c, t, n) for i, (c, t, n) in enumerate(codes[:-one])
    ]
    added = [(f"N{i:07d}", f"new text {i}", 1) for i in range(one)]
    report = timed(
        "apply",
        seconds,
        lambda: apply_source("bench", write_list(work / "v2.csv", changed + added), db=db),
    )
    return {
        "db": db.split("://")[0] if "://" in db else "sqlite",
        "rows": rows,
        "seconds": seconds,
        "run_rows_per_s": round(rows / seconds["run"]),
        "decisions_per_s": round(decisions / seconds["decide"], 1),
        "decisions_per_s_open_store": round(decisions / seconds["decide_open_store"], 1),
        "apply": report.to_dict(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=20000)
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument(
        "--postgres",
        help="a PostgreSQL database URL (emptied tables are not reused: give a fresh one)",
    )
    parser.add_argument("--index", type=Path)
    parser.add_argument("--decisions", type=int, default=500)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    targets = [str(args.work / f"bench-{time.time_ns()}.db")] + (
        [args.postgres] if args.postgres else []
    )
    results = [bench(db, args.rows, args.work, args.index, args.decisions) for db in targets]
    for result in results:
        print(json.dumps(result) if args.json else result)


if __name__ == "__main__":
    main()
