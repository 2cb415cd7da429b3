"""Reviewers at once on the review page's API: ``--reviewers`` simulated reviewers, each with
its own token, loop ``next`` → decide over HTTP for ``--seconds`` against one project on
SQLite and (with ``--postgres URL``) PostgreSQL; then the audit trail is checked.

    python benchmarks/review_concurrency.py --rows 5000 --reviewers 8 --seconds 60 --work DIR
                                            [--postgres URL] [--json]

The project is ``--rows`` codes mapped by an instant fake search (five candidates per row),
so only the review path is timed: the service is the review router alone (uvicorn on
loopback, no index). Each reviewer approves, picks candidate 2, or marks no match, at random
(seeded). Checked afterwards: every decision acknowledged (200) is in the trail under its
reviewer (none lost), no row has two decisions (none double), no 409 was needed (leases kept
reviewers apart), every decided row's state follows its decision. Reported: decisions/s and
the p50/p95 of ``next`` and of a decision.
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import socket
import threading
import time
from collections import Counter
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx
import uvicorn
from fastapi import FastAPI
from sqlalchemy import select

from termnorm.projects import add_reviewer, init_project, open_store, run_project
from termnorm.projects.models import DecisionRow, SourceRow
from termnorm.search.candidate import Candidate, RowResult
from termnorm.serve.errors import add_error_handlers
from termnorm.serve.routes.review import router


class _Fake:
    def normalize_rows(self, texts: Any, k: int = 5) -> list[RowResult]:
        return [
            RowResult([Candidate(f"X:{i}", f"c{i}", 1.0 / (i + 1), str(t), i) for i in range(1, 6)])
            for t in texts
        ]


def _project(work: Path, db: str, rows: int, reviewers: int) -> list[str]:
    source = work / "codes.csv"
    rng = random.Random(0)
    with source.open("w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["code", "text", "count"])
        for i in range(rows):
            out.writerow([f"C{i:06d}", f"term {i}", rng.randint(1, 1000)])
    init_project("bench", source, "code", "text", "count", db=db)
    run_project("bench", lambda s, y: _Fake(), db=db, show_progress=False)  # type: ignore[arg-type,return-value]
    return [add_reviewer("bench", f"r{i}", db=db).token for i in range(reviewers)]


def _serve(db: str) -> tuple[uvicorn.Server, threading.Thread, str]:
    app = FastAPI()
    app.state.settings = SimpleNamespace(project="bench", project_db=db, lease_minutes=10.0)
    add_error_handlers(app)
    app.include_router(router)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    return server, thread, f"http://127.0.0.1:{port}"


def _reviewer(url: str, token: str, seed: int, until: float, log: dict[str, Any]) -> None:
    rng = random.Random(seed)
    headers = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=url, headers=headers, timeout=60) as client:
        while time.monotonic() < until:
            start = time.perf_counter()
            row = client.post("/v1/review/next", json={}).json()["row"]
            log["next"].append(time.perf_counter() - start)
            if row is None:
                return
            body: dict[str, Any] = {"version": row["version"]}
            body["action"] = rng.choice(["approve", "pick", "no_match"])
            if body["action"] == "pick":
                body["concept_id"] = row["candidates"][1]["concept_id"]
            start = time.perf_counter()
            answer = client.post(f"/v1/review/rows/{row['code']}/decisions", json=body)
            log["decide"].append(time.perf_counter() - start)
            if answer.status_code == 200:
                log["done"].append((row["code"], answer.json()["reviewer"], body["action"]))
            else:
                log["refused"].append(answer.status_code)


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000 if ordered else 0.0


def measure(db: str, work: Path, rows: int, reviewers: int, seconds: float) -> dict[str, Any]:
    """One backend: set up, run the reviewers, check the trail."""
    tokens = _project(work, db, rows, reviewers)
    server, thread, url = _serve(db)
    logs = [{"next": [], "decide": [], "done": [], "refused": []} for _ in tokens]
    until = time.monotonic() + seconds
    threads = [
        threading.Thread(target=_reviewer, args=(url, t, i, until, logs[i]))
        for i, t in enumerate(tokens)
    ]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - start
    server.should_exit = True
    thread.join(10)
    acknowledged = [d for log in logs for d in log["done"]]
    store = open_store("bench", db)
    try:
        with store.session() as s:
            trail = s.execute(
                select(
                    SourceRow.code, DecisionRow.reviewer, DecisionRow.action, SourceRow.state
                ).join(SourceRow, SourceRow.id == DecisionRow.row_id)
            ).all()
    finally:
        store.close()
    stored = {(c, r, a) for c, r, a, _ in trail}
    per_row = Counter(c for c, *_ in trail)
    states = {"approve": "approved", "pick": "approved", "no_match": "no_match"}
    return {
        "reviewers": reviewers,
        "seconds": round(elapsed, 1),
        "decisions": len(acknowledged),
        "decisions_per_s": round(len(acknowledged) / elapsed, 1),
        "lost": sum(1 for d in acknowledged if d not in stored),
        "double": sum(1 for n in per_row.values() if n > 1),
        "unacknowledged_in_trail": len(trail) - len(acknowledged),
        "refused": dict(Counter(x for log in logs for x in log["refused"])),
        "state_mismatch": sum(1 for _, _, a, st in trail if states[a] != st),
        "next_ms_p50": round(_pct([x for log in logs for x in log["next"]], 0.5), 1),
        "next_ms_p95": round(_pct([x for log in logs for x in log["next"]], 0.95), 1),
        "decide_ms_p50": round(_pct([x for log in logs for x in log["decide"]], 0.5), 1),
        "decide_ms_p95": round(_pct([x for log in logs for x in log["decide"]], 0.95), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=5000)
    parser.add_argument("--reviewers", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--postgres", help="The URL of an empty PostgreSQL database.")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    backends = {"sqlite": str(args.work / "bench.db")}
    if args.postgres:
        backends["postgresql"] = args.postgres
    results = {
        name: measure(db, args.work, args.rows, args.reviewers, args.seconds)
        for name, db in backends.items()
    }
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        for name, r in results.items():
            print(name, r)


if __name__ == "__main__":
    main()
