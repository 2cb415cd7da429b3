"""Concurrent reviewers (issue 33): N simulated reviewers decide rows of one project for a
fixed time, on SQLite and (with ``--postgres URL``) PostgreSQL; then the audit trail is checked.

    python benchmarks/projects_concurrency.py --work DIR [--reviewers 8] [--seconds 60]
                                              [--rows 5000] [--postgres URL] [--json]

Each reviewer is a process with its own open store (as a review page's server process keeps
one) and loops: lease the next row (:func:`acquire_next` over the to-review and flagged rows,
as the page's ``next`` does: the queue's first row nobody else holds), then decide it under
the lease with the version it saw (:func:`decide_leased`): approve (60 %), pick another
candidate (20 %), no match (10 %), flag for a second opinion (10 %: the row waits for a
second opinion, whose decision replaces it). A :class:`LeaseHeldError` or
:class:`StaleRowError` is a conflict (none is expected: the lease keeps reviewers apart); a
busy database is retried. Each reviewer reports every decision it was told succeeded.

Checked afterwards, from the database alone and against the reviewers' reports:

* no lost decision: every decision a reviewer was told succeeded is in the trail, and the
  trail holds no other;
* no double decision: no two state-changing decisions were made against the same row
  version (the compare-and-set held);
* the trail is complete: per row, the state-changing decisions' versions run 1, 2, ... from
  the version mapped, each replaces the one before, and the row points at the last one with
  the version after it.
"""

from __future__ import annotations

import argparse
import itertools
import json
import multiprocessing as mp
import random
import time
import uuid
from collections import defaultdict
from pathlib import Path
from typing import Any

from projects_store import InstantMatcher  # this folder's store benchmark: no search
from sqlalchemy import create_engine, select, text

from termnorm.errors import DatabaseBusyError, LeaseHeldError, StaleRowError
from termnorm.projects import (
    LeasedRow,
    PipelineSettings,
    acquire_next,
    decide_leased,
    init_project,
    open_store,
    run_project,
)
from termnorm.projects.models import DecisionRow, SourceRow
from termnorm.projects.states import RowState
from termnorm.projects.store import Store

OPEN = (RowState.TO_REVIEW, RowState.FLAGGED)  # a flagged row waits for a second opinion
ACTIONS = [("approve", 0.6), ("pick", 0.2), ("no_match", 0.1), ("flag", 0.1)]


def claim(store: Store, reviewer: str) -> LeasedRow | None:
    """The row ``reviewer`` decides next, leased to them: the queue's first to-review or
    flagged row that nobody else holds (``None``: none left)."""
    return acquire_next("p", reviewer, states=OPEN, db=store)


def reviewer_loop(db: str, name: str, seconds: float, seed: int, out: Any, go: Any) -> None:
    """One reviewer: open the store, say so on ``out``, wait for ``go``, then decide rows
    until ``seconds`` are up; put its report on ``out``."""
    rng = random.Random(seed)
    store = open_store("p", db)
    out.put("ready")
    go.wait()
    done: list[int] = []
    conflicts = busy = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            leased = claim(store, name)
            if leased is None:
                break
            action = rng.choices([a for a, _w in ACTIONS], [w for _a, w in ACTIONS])[0]
            concept = "T:0002" if action == "pick" else None
            record = decide_leased("p", leased.row.code, action, reviewer=name,
                                   version=leased.row.version, concept_id=concept, db=store)  # fmt: skip
            done.append(record.id)
        except (LeaseHeldError, StaleRowError):
            conflicts += 1
        except DatabaseBusyError:
            busy += 1
    store.close()
    out.put({"reviewer": name, "decisions": done, "conflicts": conflicts, "busy": busy})


def audit(db: str, reported: set[int]) -> dict[str, Any]:
    """Check the trail against the reviewers' reports (see the module)."""
    store = open_store("p", db)
    with store.session() as s:
        trail = s.execute(
            select(DecisionRow.id, DecisionRow.row_id, DecisionRow.row_version,
                   DecisionRow.action, DecisionRow.replaces_decision_id).order_by(DecisionRow.id)
        ).all()  # fmt: skip
        rows = {r.id: (r.version, r.decision_id) for r in s.scalars(select(SourceRow))}
    store.close()
    stored = {d.id for d in trail}
    per_row: dict[int, list[Any]] = defaultdict(list)
    for d in trail:
        if d.action != "comment":
            per_row[d.row_id].append(d)
    doubles = broken = 0
    for row_id, decisions in per_row.items():
        versions = [d.row_version for d in decisions]
        doubles += len(versions) - len(set(versions))
        chain_ok = all(b.row_version == a.row_version + 1 and b.replaces_decision_id == a.id
                       for a, b in itertools.pairwise(decisions))  # fmt: skip
        version, last = rows[row_id]
        if not chain_ok or last != decisions[-1].id or version != decisions[-1].row_version + 1:
            broken += 1
    return {
        "trail": len(trail),
        "lost": len(reported - stored),
        "unreported": len(stored - reported),
        "double": doubles,
        "rows_decided": len(per_row),
        "rows_with_broken_trail": broken,
    }


def fresh_postgres(url: str) -> str:
    """A new database on the server at ``url``; its URL."""
    name = f"termnorm_conc_{uuid.uuid4().hex[:8]}"
    engine = create_engine(url, isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    engine.dispose()
    return url.rsplit("/", 1)[0] + "/" + name


def bench(db: str, work: Path, args: argparse.Namespace) -> dict[str, Any]:
    codes = work / "codes.csv"
    with codes.open("w") as f:
        f.write("code,text,count\n")
        rng = random.Random(0)
        f.writelines(f"C{i:06d},text {i},{rng.randint(1, 50)}\n" for i in range(args.rows))
    init_project("p", codes, "code", "text", "count", settings=PipelineSettings(), db=db)
    run_project("p", lambda _s, _p: InstantMatcher(), db=db, show_progress=False)  # type: ignore[arg-type,return-value]
    ctx = mp.get_context("spawn")
    out, go = ctx.Queue(), ctx.Event()
    procs = [
        ctx.Process(target=reviewer_loop, args=(db, f"r{i}", args.seconds, i, out, go))
        for i in range(args.reviewers)
    ]
    for p in procs:
        p.start()
    assert all(out.get() == "ready" for _ in procs)  # every process imported and connected
    start = time.perf_counter()
    go.set()
    reports = [out.get() for _ in procs]
    for p in procs:
        p.join()
    elapsed = time.perf_counter() - start
    reported = [d for r in reports for d in r["decisions"]]
    result = {
        "db": "postgresql" if db.startswith("postgresql") else "sqlite",
        "reviewers": args.reviewers,
        "seconds": round(elapsed, 1),
        "decisions": len(reported),
        "decisions_per_s": round(len(reported) / elapsed, 1),
        "conflicts": sum(r["conflicts"] for r in reports),
        "busy_retries": sum(r["busy"] for r in reports),
        "reported_twice": len(reported) - len(set(reported)),
        **audit(db, set(reported)),
    }
    ok = not (result["lost"] or result["unreported"] or result["double"]
              or result["rows_with_broken_trail"] or result["reported_twice"])  # fmt: skip
    result["ok"] = ok
    return result


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--reviewers", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--rows", type=int, default=5000)
    parser.add_argument("--postgres", help="a server URL whose role may create databases")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    targets = [str(args.work / f"conc-{time.time_ns()}.db")]
    if args.postgres:
        targets.append(fresh_postgres(args.postgres))
    for db in targets:
        result = bench(db, args.work, args)
        print(json.dumps(result) if args.json else result, flush=True)


if __name__ == "__main__":
    main()
