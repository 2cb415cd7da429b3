"""``map run`` at scale (issue 33): a large synthetic code list, kill -9 at about half, the
rerun, every row exactly once; and the real search's rows/s and memory on part of the list.

    python benchmarks/projects_scale.py --index IDX --work DIR [--rows 100000]
        [--kill-at 0.5] [--search-rows 2000] [--runtime onnx-int8] [--workers 0] [--json OUT]

The list: ``--rows`` codes whose texts are the index's terms with one seeded character or
word edit each (``index_build_scale._perturb``: a swapped, dropped, doubled or replaced
letter, a dropped or swapped word, a clinical qualifier added), seed 0.

``store``   the whole list mapped by :func:`~termnorm.projects.run_project` in a child
            process with an instant search (five fixed candidates per row), so the figure is
            the store's: the child is killed with SIGKILL once ``--kill-at`` of the rows are
            mapped, then a second child maps the rest. Checked from the database: every row
            mapped, each with exactly k candidates of ranks 1..k, no (row, rank) twice, and
            the two runs' rows adding up to the list.
``search``  the first ``--search-rows`` rows as a project of their own, mapped by
            ``termnorm map run`` (the CLI, the real search: ``--index`` with ``--runtime``)
            in a child process; rows/s from the wall time (model and index loading
            included) and the peak RSS of the process tree (``VmHWM``). ``--workers N`` adds
            the same with ``--engine ray --workers N``.
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
from index_build_scale import Watched, _perturb  # this folder's index-build benchmark
from sqlalchemy import func, select

from termnorm.projects import PipelineSettings, init_project, open_store
from termnorm.projects.models import CandidateRow, SourceRow
from termnorm.projects.store import Store

ROOT = Path(__file__).resolve().parents[1]
K = 5


def code_list(index: Path, rows: int, out: Path, seed: int = 0) -> Path:
    """``rows`` perturbed index terms as a code list (code, text, count)."""
    terms = pq.read_table(index / "terms.parquet", columns=["term"]).column("term").to_pylist()
    rng = random.Random(seed)
    with out.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["code", "text", "count"])
        for i in range(rows):
            writer.writerow([f"S{i:07d}", _perturb(rng.choice(terms), rng), rng.randint(1, 99)])
    return out


def child_run(db: str) -> None:
    """The ``store`` stage's child: map every row with the instant search."""
    from projects_store import InstantMatcher  # this folder's store benchmark: no search

    from termnorm.projects import run_project

    run_project("scale", lambda _s, _p: InstantMatcher(), db=db, show_progress=False,  # type: ignore[arg-type,return-value]
                check_source=False)  # fmt: skip


def mapped(store: Store) -> int:
    """Rows mapped so far (one count: the watcher must not slow the run down)."""
    with store.session() as s:
        return int(s.scalar(select(func.count()).where(SourceRow.state == "to_review")) or 0)


def exactly_once(db: str, rows: int) -> dict[str, Any]:
    """What the database holds after the rerun (see the module)."""
    store = open_store("scale", db)
    with store.session() as s:
        states = dict(
            s.execute(select(SourceRow.state, func.count()).group_by(SourceRow.state)).all()
        )
        per_row = s.execute(
            select(func.count(), func.count(func.distinct(CandidateRow.rank)),
                   func.min(CandidateRow.rank), func.max(CandidateRow.rank))
            .group_by(CandidateRow.row_id)
        ).all()  # fmt: skip
        pairs = s.scalar(
            select(func.count()).select_from(
                select(CandidateRow.row_id, CandidateRow.rank)
                .group_by(CandidateRow.row_id, CandidateRow.rank)
                .having(func.count() > 1)
                .subquery()
            )
        )
    store.close()
    good = sum(n == d == K and lo == 1 and hi == K for n, d, lo, hi in per_row)
    return {
        "rows": sum(states.values()),
        "states": states,
        "rows_with_candidates": len(per_row),
        "rows_with_exactly_k_ranks_1_to_k": good,
        "duplicate_row_rank_pairs": int(pairs or 0),
        "ok": states == {"to_review": rows} and good == rows and not pairs,
    }


def stage_store(args: argparse.Namespace, codes: Path) -> dict[str, Any]:
    db = str(args.work / f"store-{time.time_ns()}.db")
    start = time.perf_counter()
    init_project("scale", codes, "code", "text", "count", settings=PipelineSettings(), db=db)
    init_s = time.perf_counter() - start
    argv = [sys.executable, __file__, "--child-run", db]
    first = Watched(argv, args.work / "store-run1.log")
    half = int(args.rows * args.kill_at)
    watcher = open_store("scale", db)
    killed_s = first.wait(until=lambda: mapped(watcher) >= half)
    at_kill = mapped(watcher)
    watcher.close()
    second = Watched(argv, args.work / "store-run2.log")
    rerun_s = second.wait()
    return {
        "init_s": round(init_s, 1),
        "killed_after_s": round(killed_s, 1),
        "mapped_at_kill": at_kill,
        "rerun_s": round(rerun_s, 1),
        "rows_per_s": round(args.rows / (killed_s + rerun_s)),  # process starts included
        "rerun_rows_per_s": round((args.rows - at_kill) / rerun_s),
        "peak_rss_mib": max(first.memory()["driver_mib"], second.memory()["driver_mib"]),
        **exactly_once(db, args.rows),
    }


def stage_search(args: argparse.Namespace, codes: Path, workers: int) -> dict[str, Any]:
    part = args.work / "search-codes.csv"
    with codes.open() as f, part.open("w") as out:
        out.writelines(line for _i, line in zip(range(args.search_rows + 1), f, strict=False))
    db = str(args.work / f"search-{workers}-{time.time_ns()}.db")
    cli = [
        sys.executable,
        "-c",
        "import sys; from termnorm.cli.main import main; main(sys.argv[1:])",
    ]
    init = Watched([*cli, "map", "init", "scale", "--source", str(part), "--code-column", "code",
                    "--text-column", "text", "--frequency-column", "count", "--index",
                    str(args.index), "--runtime", args.runtime, "--db", db], args.work / "init.log")  # fmt: skip
    init.wait()
    engine = ["--engine", "ray", "--workers", str(workers)] if workers else []
    run = Watched([*cli, "map", "run", "scale", "--db", db, "--no-progress", *engine],
                  args.work / f"search-run-{workers}.log")  # fmt: skip
    wall = run.wait()
    store = open_store("scale", db)
    done = mapped(store)
    store.close()
    memory = run.memory()  # its worker figure knows the index build's actors, not ours
    return {
        "engine": f"ray x{workers}" if workers else "local",
        "rows": done,
        "wall_s": round(wall, 1),
        "rows_per_s": round(done / wall, 1),
        "extrapolated_100k_min": round(100_000 / (done / wall) / 60),
        "peak_rss_mib": memory["driver_mib"],
        "ray_worker_max_mib": round(
            max(
                (m for c, m in run.peaks.values() if c.startswith("ray::_MatchActor")), default=0.0
            ),
            1,
        ),
    }


def main() -> None:
    if sys.argv[1:2] == ["--child-run"]:
        child_run(sys.argv[2])
        return
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--kill-at", type=float, default=0.5)
    parser.add_argument("--search-rows", type=int, default=2000)
    parser.add_argument("--runtime", default="onnx-int8")
    parser.add_argument("--workers", type=int, default=0, help="also run --engine ray")
    parser.add_argument("--stages", default="store,search")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    codes = code_list(args.index, args.rows, args.work / "codes.csv")
    results: dict[str, Any] = {}
    if "store" in args.stages:
        results["store"] = stage_store(args, codes)
        print(json.dumps({"store": results["store"]}), flush=True)
    if "search" in args.stages:
        for workers in [0] + ([args.workers] if args.workers else []):
            key = f"search_{workers or 'local'}"
            results[key] = stage_search(args, codes, workers)
            print(json.dumps({key: results[key]}), flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
