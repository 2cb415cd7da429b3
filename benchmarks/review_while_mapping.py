"""The review page while ``termnorm map run`` writes (issue 33): the latency of the page's API
calls with reviewers at work, first alone (baseline), then while ``map run`` maps new rows of
the same project into the same database; SQLite and (with ``--postgres URL``) PostgreSQL.

    python benchmarks/review_while_mapping.py --index IDX --work DIR [--rows 12000]
        [--queue-rows 1500] [--reviewers 3] [--baseline-seconds 60] [--think-ms 300]
        [--search-share 0.25] [--runtime onnx-int8] [--map-cpu 1] [--postgres URL] [--json OUT]

The project: ``--queue-rows`` + ``--rows`` codes of ``projects_scale.code_list`` (perturbed
index terms). The first ``--queue-rows`` are mapped at once by :class:`IndexConcepts` (five
of the index's concepts per row, no search: real concept IDs, so the page's concept panel
answers) and form the queue; the other ``--rows`` come in by ``map apply`` as rows to map.

The service is ``termnorm serve --project p --db DB`` in a child process (the project's
index: search by hand and the concept panel are the service's own). ``--reviewers`` threads,
each with its own token, do what the page does for a row: ``POST /v1/review/next`` (lease),
``GET /v1/review/queue?limit=20``, ``GET /v1/review/rows/CODE``, ``GET /v1/concepts/ID`` (the
top candidate), ``POST /v1/normalize`` for a share ``--search-share`` of the rows (search by
hand; a result is then picked), ``--think-ms`` of thought, then the decision (approve 60 %,
pick candidate 2 25 %, no match 10 %, flag 5 %).

After ``--baseline-seconds`` alone, ``termnorm map run p --db DB --no-progress`` starts in a
child process pinned to CPU ``--map-cpu`` (``taskset``; BLAS/OpenMP threads 1: ``map run``
has no thread option, so the ONNX Runtime pool is confined to one core rather than sized to
one thread) and maps the ``--rows`` rows, real search, ``--runtime``; the reviewers go on
until it ends. A call belongs to the phase in which it started: ``baseline``, ``loading``
(``map run`` started, no row written yet) or ``writing`` (from its first written batch to its
last; the rows left to map are counted once a second). Reported per phase and call: count,
p50 / p95 / max milliseconds and the answers other than 2xx; the p95 ratio writing /
baseline; ``map run``'s wall time, rows/s (start-up included) and rows/s while writing; the
load average; and the decisions audited as ``projects_concurrency.audit`` does (none lost,
none double, none unreported, every trail whole).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import sys
import threading
import time
import zlib
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx
import pyarrow.parquet as pq
from index_build_scale import CLI, Watched  # this folder's index-build benchmark
from projects_concurrency import audit, fresh_postgres  # this folder's reviewers benchmark
from projects_scale import code_list  # this folder's map-run benchmark
from review_concurrency import _pct  # this folder's review-API benchmark
from sqlalchemy import func, select

from termnorm.projects import (
    PipelineSettings,
    add_reviewer,
    apply_source,
    init_project,
    open_store,
    run_project,
)
from termnorm.projects.models import SourceRow
from termnorm.projects.states import RowState
from termnorm.projects.store import Store
from termnorm.search.candidate import Candidate, RowResult

PROJECT = "p"  # projects_concurrency.audit reads this project
CALLS = ("next", "queue", "row", "concept", "search", "decide")
ACTIONS = [("approve", 0.6), ("pick", 0.25), ("no_match", 0.1), ("flag", 0.05)]
Sample = tuple[str, float, float, int]  # call, start (monotonic s), seconds, HTTP status


class IndexConcepts:
    """Five of the index's concepts per text, drawn by a hash of the text, scores falling
    from 0.5-1.0: real concept IDs without a search."""

    def __init__(self, index: Path) -> None:
        table = pq.read_table(index / "concepts.parquet", columns=["concept_id", "name"])
        ids, names = (table.column(c).to_pylist() for c in ("concept_id", "name"))
        self.concepts = list(zip(ids, names, strict=True))

    def normalize_rows(self, texts: Sequence[object], k: int = 5) -> list[RowResult]:
        out = []
        for text in texts:
            rng = random.Random(zlib.crc32(str(text).encode()))
            scores = sorted((rng.uniform(0.5, 1.0) for _ in range(k)), reverse=True)
            picks = rng.sample(self.concepts, k)
            ranked = enumerate(zip(picks, scores, strict=True), start=1)
            out.append(RowResult([Candidate(c, n, s, str(text), r) for r, ((c, n), s) in ranked]))
        return out


def setup(db: str, args: argparse.Namespace) -> list[str]:
    """The project (see the module); the reviewers' tokens."""
    codes = code_list(args.index, args.queue_rows + args.rows, args.work / "codes.csv")
    first = args.work / "queue-codes.csv"
    with codes.open() as f, first.open("w") as out:
        out.writelines(line for _i, line in zip(range(args.queue_rows + 1), f, strict=False))
    settings = PipelineSettings.of(index=args.index, runtime=args.runtime)
    init_project(PROJECT, first, "code", "text", "count", settings=settings, db=db)
    run_project(PROJECT, lambda _s, _p: IndexConcepts(args.index), db=db, show_progress=False)  # type: ignore[arg-type,return-value]
    apply_source(PROJECT, codes, db=db)  # the other rows: to map
    return [add_reviewer(PROJECT, f"r{i}", db=db).token for i in range(args.reviewers)]


def serve(db: str, work: Path, timeout: float = 600.0) -> tuple[Watched, str]:
    """``termnorm serve --project`` in a child process, once ready (index loaded); its URL."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    argv = [sys.executable, "-c", CLI, "serve", "--project", PROJECT, "--db", db,
            "--port", str(port)]  # fmt: skip
    server = Watched(argv, work / "serve.log")
    url, deadline = f"http://127.0.0.1:{port}", time.monotonic() + timeout
    while time.monotonic() < deadline and server.poll():
        try:
            if httpx.get(f"{url}/v1/ready", timeout=5).status_code == 200:
                return server, url
        except httpx.TransportError:
            pass  # not listening yet
        time.sleep(1)
    server.proc.kill()
    server.wait()
    raise SystemExit(f"the service did not get ready; see {work / 'serve.log'}")


def reviewer(url: str, token: str, seed: int, args: argparse.Namespace, stop: threading.Event,
             samples: list[Sample], decided: list[int]) -> None:  # fmt: skip
    """One reviewer on the page's API until ``stop`` (see the module); every call timed into
    ``samples``, the ids of the decisions answered 200 into ``decided``."""
    rng = random.Random(seed)
    headers = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=url, headers=headers, timeout=120) as client:

        def call(name: str, method: str, path: str, **kw: Any) -> httpx.Response:
            start = time.monotonic()
            answer = client.request(method, path, **kw)
            samples.append((name, start, time.monotonic() - start, answer.status_code))
            return answer

        while not stop.is_set():
            got = call("next", "POST", "/v1/review/next", json={})
            row = got.json()["row"] if got.status_code == 200 else None
            call("queue", "GET", "/v1/review/queue", params={"limit": 20})
            if row is None:  # busy, or the queue is empty until map run writes more
                stop.wait(1.0)
                continue
            code, candidates = row["code"], row["candidates"]
            call("row", "GET", f"/v1/review/rows/{code}")
            action = rng.choices([a for a, _w in ACTIONS], [w for _a, w in ACTIONS])[0]
            body: dict[str, Any] = {"version": row["version"], "action": action}
            if candidates:
                call("concept", "GET", f"/v1/concepts/{candidates[0]['concept_id']}")
            if rng.random() < args.search_share:
                found = call("search", "POST", "/v1/normalize",
                             json={"texts": [row["text"]], "k": 10})  # fmt: skip
                hits = found.json()["results"][0]["candidates"] if found.status_code == 200 else []
                if hits:
                    hit = rng.choice(hits)
                    body.update(
                        action="pick", concept_id=hit["concept_id"], concept_name=hit["name"]
                    )
            if body["action"] == "pick" and "concept_id" not in body:
                if len(candidates) < 2:
                    body["action"] = "approve" if candidates else "no_match"
                else:
                    body["concept_id"] = candidates[1]["concept_id"]
            if body["action"] == "approve" and not candidates:
                body["action"] = "no_match"
            stop.wait(args.think_ms / 1000)
            answer = call("decide", "POST", f"/v1/review/rows/{code}/decisions", json=body)
            if answer.status_code == 200:
                decided.append(int(answer.json()["id"]))


def to_map(store: Store) -> int:
    """Rows still to map."""
    with store.session() as s:
        query = select(func.count()).where(SourceRow.state == RowState.TO_MAP.value)
        return int(s.scalar(query) or 0)


class Progress:
    """Watches ``map run`` once a second: when its first batch and its last were written."""

    def __init__(self, db: str, rows: int) -> None:
        self.store, self.rows = open_store(PROJECT, db), rows
        self.first: tuple[float, int] | None = None  # (time, rows left then)
        self.last: float | None = None
        self._next = 0.0

    def __call__(self) -> bool:
        """Sample (at most once a second); never asks to stop the run (see ``Watched.wait``)."""
        now = time.monotonic()
        if now >= self._next and self.last is None:
            self._next = now + 1.0
            left = to_map(self.store)
            if left < self.rows and self.first is None:
                self.first = (now, left)
            if left == 0:
                self.last = now
        return False


def summary(samples: list[Sample], start: float, end: float) -> dict[str, Any]:
    """Per call: count, p50 / p95 / max ms and non-2xx answers of the calls started in
    [start, end)."""
    out: dict[str, Any] = {}
    for name in CALLS:
        took = [(s, status) for c, t, s, status in samples if c == name and start <= t < end]
        seconds = [s for s, _st in took]
        if not seconds:
            continue
        out[name] = {
            "n": len(seconds),
            "p50_ms": round(_pct(seconds, 0.5), 1),
            "p95_ms": round(_pct(seconds, 0.95), 1),
            "max_ms": round(max(seconds) * 1000, 1),
            "not_2xx": dict(Counter(str(st) for _s, st in took if not 200 <= st < 300)),
        }
    return out


def map_run_argv(db: str, cpu: int) -> list[str]:
    """``termnorm map run`` on one CPU (``cpu`` < 0: not pinned), BLAS/OpenMP threads 1."""
    pin = ["taskset", "-c", str(cpu)] if cpu >= 0 else []
    threads = [f"{v}=1" for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")]
    return [*pin, "env", *threads, sys.executable, "-c", CLI, "map", "run", PROJECT, "--db", db,
            "--no-progress"]  # fmt: skip


def measure(db: str, args: argparse.Namespace) -> dict[str, Any]:
    """One backend: the project, the service, the reviewers alone, then with ``map run``."""
    tokens = setup(db, args)
    server, url = serve(db, args.work)
    stop, samples, decided = threading.Event(), [], []  # type: ignore[var-annotated]
    threads = [
        threading.Thread(target=reviewer, args=(url, t, i, args, stop, samples, decided))
        for i, t in enumerate(tokens)
    ]
    began = time.monotonic()
    for t in threads:
        t.start()
    time.sleep(args.baseline_seconds)
    load = {"baseline": os.getloadavg()[0]}
    watch = Progress(db, args.rows)
    started = time.monotonic()
    run = Watched(map_run_argv(db, args.map_cpu), args.work / "map-run.log")
    wall = run.wait(until=watch)
    ended = time.monotonic()
    load["with_map_run"] = os.getloadavg()[0]
    stop.set()
    for t in threads:
        t.join()
    server.proc.terminate()
    server.wait()
    if run.proc.returncode != 0 or watch.first is None:
        raise SystemExit(f"map run failed ({run.proc.returncode}); see {args.work / 'map-run.log'}")
    first, left_at_first = watch.first
    last = watch.last if watch.last is not None else ended
    phases = {
        "baseline": summary(samples, began, started),
        "loading": summary(samples, started, first),
        "writing": summary(samples, first, last),
    }
    base, writing = phases["baseline"], phases["writing"]
    result = {
        "db": "postgresql" if db.startswith("postgresql") else "sqlite",
        "phase_seconds": {
            name: round(b - a, 1)
            for name, (a, b) in zip(
                phases, [(began, started), (started, first), (first, last)], strict=True
            )
        },
        **phases,
        "p95_ratio_writing_to_baseline": {
            c: round(writing[c]["p95_ms"] / base[c]["p95_ms"], 2)
            for c in CALLS
            if c in base and c in writing and base[c]["p95_ms"] > 0
        },
        "map_run": {
            "rows": args.rows,
            "left": to_map(watch.store),
            "wall_s": round(wall, 1),
            "rows_per_s": round(args.rows / wall, 1),
            "writing_rows_per_s": round(left_at_first / max(last - first, 1e-9), 1),
            "peak_rss_mib": run.memory()["driver_mib"],
        },
        "server_peak_rss_mib": server.memory()["driver_mib"],
        "load_average_1min": load,
        "decisions": len(decided),
        **audit(db, set(decided)),
    }
    watch.store.close()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--rows", type=int, default=12000, help="rows map run maps")
    parser.add_argument("--queue-rows", type=int, default=1500, help="rows mapped at the start")
    parser.add_argument("--reviewers", type=int, default=3)
    parser.add_argument("--baseline-seconds", type=float, default=60.0)
    parser.add_argument("--think-ms", type=float, default=300.0)
    parser.add_argument("--search-share", type=float, default=0.25)
    parser.add_argument("--runtime", default="onnx-int8")
    parser.add_argument("--map-cpu", type=int, default=1, help="CPU for map run (-1: any)")
    parser.add_argument("--postgres", help="a server URL whose role may create databases")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    args.index = args.index.resolve()
    targets = [str(args.work / f"review-map-{time.time_ns()}.db")]
    if args.postgres:
        targets.append(fresh_postgres(args.postgres))
    results = []
    for db in targets:
        results.append(measure(db, args))
        print(json.dumps(results[-1]), flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
