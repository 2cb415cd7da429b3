"""Load and fault figures of ``termnorm serve`` on loopback.

    python benchmarks/load.py [--index IDX] [--mentions NCBI_DEVEL] [--clients 16]
                              [--duration 60] [--warmup 3] [--malformed 0.1] [--seed 0]
                              [--skip-fault]

1. Load: ``termnorm serve`` is started as a subprocess on ``127.0.0.1`` (a free port) over
   ``--index``; once ``/v1/ready`` answers 200, ``--clients`` concurrent asyncio clients
   (``httpx.AsyncClient``) send ``POST /v1/normalize`` for ``--duration`` seconds, each with 1-4
   real mention texts of NCBI devel. A share ``--malformed`` of the requests is malformed (a
   seeded mix: bad JSON, wrong types, an empty list, an empty text, more texts than the
   server's ``--max-batch``, a missing field). Before the measured run the same clients send
   well-formed requests for ``--warmup`` seconds (first-request costs: the memory-mapped
   vectors read into the page cache, the encoder's first forward passes); those are not in
   the figures, except that any 5xx or transport error among them is counted in
   ``warmup``. Printed as JSON: requests/s, p50/p99 latency of
   the answered well-formed requests (200), the number of 5xx answers and of transport errors
   (both must be 0), how many malformed requests got a 4xx (must be all), and the micro-batch
   sizes from ``/metrics`` (of the measured run only). It runs twice, micro-batching on and ``--no-micro-batching``, and
   prints the ratio of requests/s and of p50/p99.
2. Fault: the server is started with a token and a synonyms file, a synonym is added through
   ``POST /v1/synonyms``, the server is SIGKILLed while clients send requests, restarted
   (without a token), and the synonym must be in ``GET /v1/concepts/{id}`` and be the top
   ``d-t`` candidate of its own text. Printed as pass/fail; the exit status is 1 when a
   check fails.

Traffic goes to ``127.0.0.1`` only; every loop is bounded in time and count, and every
server started is stopped (SIGTERM, then SIGKILL) before the script returns.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from termnorm.mentions import read_mentions

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
NCBI_DEVEL = ROOT.parent / "shared" / "benchmarks" / "ncbi_disease" / "NCBIdevelopset_corpus.txt"
DEFAULT_INDEX = ROOT / "idx" / "medic"  # the README's working folder
HOST = "127.0.0.1"
MAX_BATCH = 64  # passed to the server as --max-batch; "too many" requests send one more
MAX_REQUESTS_PER_CLIENT = 1_000_000  # the count bound of each client's loop
MALFORMED_KINDS = ("bad_json", "wrong_type", "text_not_string", "empty_list", "empty_text")
MALFORMED_KINDS += ("too_many", "missing_texts", "k_not_int")


@dataclass(frozen=True)
class Outcome:
    """One request: whether it was malformed (its kind) or valid, its status, its latency.

    ``status`` is 0 when the transport failed (no HTTP answer)."""

    kind: str
    status: int
    seconds: float


def free_port() -> int:
    """A TCP port on 127.0.0.1 free at the time of the call."""
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def mention_texts(path: Path) -> list[str]:
    """The distinct mention texts of a dataset, in file order."""
    return list(dict.fromkeys(m.text for m in read_mentions(path)))


def start_server(
    index: Path,
    port: int,
    log: Path,
    *,
    micro_batching: bool = True,
    synonyms: Path | None = None,
    token: str | None = None,
) -> subprocess.Popen[bytes]:
    """``termnorm serve`` over ``index`` on 127.0.0.1:``port`` (this checkout's code), its
    output appended to ``log``."""
    argv = [sys.executable, "-c", "from termnorm.cli.main import main; main()", "serve"]
    argv += ["--index", str(index), "--host", HOST, "--port", str(port)]
    argv += ["--max-batch", str(MAX_BATCH)]
    if not micro_batching:
        argv.append("--no-micro-batching")
    if synonyms is not None:
        argv += ["--synonyms-file", str(synonyms)]
    if token is not None:
        argv += ["--token", token]
    path = os.environ.get("PYTHONPATH", "")
    env = {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{path}" if path else str(SRC)}
    env.pop("TERMNORM_TOKEN", None)
    with log.open("ab") as sink:
        return subprocess.Popen(argv, env=env, stdout=sink, stderr=sink)


def wait_ready(base: str, process: subprocess.Popen[bytes], log: Path, timeout: float) -> None:
    """Poll ``/v1/ready`` until 200; raise with the server's log when it exits or times out."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited ({process.returncode}):\n{_tail(log)}")
        try:
            if httpx.get(f"{base}/v1/ready", timeout=5).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"the server was not ready after {timeout:.0f} s:\n{_tail(log)}")


def stop_server(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM, then SIGKILL after 20 s; waits for the exit."""
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(20)


@contextmanager
def server(
    index: Path, log: Path, ready_timeout: float, **options: Any
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """A started, ready server (its base URL and process), stopped on exit."""
    port = free_port()
    process = start_server(index, port, log, **options)
    try:
        base = f"http://{HOST}:{port}"
        wait_ready(base, process, log, ready_timeout)
        yield base, process
    finally:
        stop_server(process)


def _tail(log: Path, chars: int = 3000) -> str:
    return log.read_text(errors="replace")[-chars:] if log.exists() else "(no log)"


def malformed_request(kind: str, texts: Sequence[str]) -> tuple[bytes, str]:
    """The body and content type of a malformed ``/v1/normalize`` request of ``kind``."""
    text = texts[0]
    bodies: dict[str, Any] = {
        "wrong_type": {"texts": text},
        "text_not_string": {"texts": [text, 42]},
        "empty_list": {"texts": []},
        "empty_text": {"texts": [text, "   "]},
        "too_many": {"texts": [text] * (MAX_BATCH + 1)},
        "missing_texts": {"k": 3},
        "k_not_int": {"texts": [text], "k": "five"},
    }
    if kind == "bad_json":
        return b'{"texts": ["' + text.encode() + b'",', "application/json"
    return json.dumps(bodies[kind]).encode(), "application/json"


async def _client(
    client: httpx.AsyncClient,
    base: str,
    texts: Sequence[str],
    rng: random.Random,
    malformed: float,
    stop_at: float,
    out: list[Outcome],
) -> None:
    for _ in range(MAX_REQUESTS_PER_CLIENT):
        if time.monotonic() >= stop_at:
            return
        if rng.random() < malformed:
            kind = rng.choice(MALFORMED_KINDS)
            content, ctype = malformed_request(kind, rng.sample(texts, 1))
        else:
            kind = "valid"
            body = {"texts": rng.sample(texts, rng.randint(1, 4)), "k": 5}
            content, ctype = json.dumps(body).encode(), "application/json"
        start = time.perf_counter()
        try:
            answer = await client.post(
                f"{base}/v1/normalize", content=content, headers={"Content-Type": ctype}
            )
            status = answer.status_code
        except httpx.TransportError:
            status = 0
        out.append(Outcome(kind, status, time.perf_counter() - start))
        if status == 0:
            await asyncio.sleep(0.05)  # a dead server: do not spin


async def run_load(
    base: str,
    texts: Sequence[str],
    *,
    clients: int,
    duration: float,
    malformed: float,
    seed: int,
) -> list[Outcome]:
    """``clients`` concurrent clients sending requests to ``base`` for ``duration`` s."""
    out: list[Outcome] = []
    stop_at = time.monotonic() + duration
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(timeout=60, limits=limits) as client:
        await asyncio.gather(
            *(
                _client(
                    client, base, texts, random.Random(seed * 1000 + i), malformed, stop_at, out
                )
                for i in range(clients)
            )
        )
    return out


def summarize(outcomes: Sequence[Outcome], seconds: float) -> dict[str, Any]:
    """Requests/s, latency of answered valid requests, 5xx and transport errors, malformed
    requests answered 4xx (overall and by kind)."""
    ok = np.array([o.seconds for o in outcomes if o.kind == "valid" and o.status == 200])
    bad = [o for o in outcomes if o.kind != "valid"]
    by_kind: dict[str, list[int]] = {}
    for o in bad:
        by_kind.setdefault(o.kind, []).append(o.status)
    return {
        "requests": len(outcomes),
        "requests_per_s": round(len(outcomes) / seconds, 1),
        "ok_requests": int(ok.size),
        "p50_ms": round(float(np.percentile(ok, 50)) * 1000, 1) if ok.size else None,
        "p99_ms": round(float(np.percentile(ok, 99)) * 1000, 1) if ok.size else None,
        "valid_not_200": sum(o.kind == "valid" and o.status != 200 for o in outcomes),
        "status_5xx": sum(o.status >= 500 for o in outcomes),
        "transport_errors": sum(o.status == 0 for o in outcomes),
        "malformed": len(bad),
        "malformed_4xx": sum(400 <= o.status < 500 for o in bad),
        "malformed_by_kind": {
            k: {"sent": len(v), "statuses": sorted(set(v))} for k, v in sorted(by_kind.items())
        },
    }


def batch_stats(metrics_text: str, since: str | None = None) -> dict[str, Any]:
    """Micro-batches encoded and their mean size, from ``termnorm_batch_texts`` in the
    Prometheus text of ``/metrics`` (minus those of an earlier scrape ``since``)."""

    def totals(text: str) -> tuple[float, float]:
        values: dict[str, float] = {}
        for line in text.splitlines():
            if line.startswith(("termnorm_batch_texts_sum", "termnorm_batch_texts_count")):
                name, value = line.split()
                values[name] = float(value)
        return values.get("termnorm_batch_texts_count", 0.0), values.get(
            "termnorm_batch_texts_sum", 0.0
        )

    count, total = totals(metrics_text)
    if since is not None:
        before = totals(since)
        count, total = count - before[0], total - before[1]
    return {
        "batches": int(count),
        "texts": int(total),
        "mean_texts_per_batch": round(total / count, 2) if count else None,
    }


def measure(
    index: Path,
    texts: Sequence[str],
    workdir: Path,
    *,
    micro_batching: bool,
    clients: int,
    duration: float,
    malformed: float,
    seed: int,
    warmup: float = 0.0,
    ready_timeout: float = 300.0,
) -> dict[str, Any]:
    """One load run against a fresh server, after ``warmup`` s of well-formed requests that
    are not measured: :func:`summarize` plus :func:`batch_stats` of the measured run."""
    name = "micro" if micro_batching else "no-micro"
    log = workdir / f"server-{name}.log"
    with server(index, log, ready_timeout, micro_batching=micro_batching) as (base, _):
        warm: list[Outcome] = []
        if warmup > 0:
            warm = asyncio.run(
                run_load(base, texts, clients=clients, duration=warmup, malformed=0.0, seed=-1)
            )
        before = httpx.get(f"{base}/metrics", timeout=10).text
        start = time.monotonic()
        outcomes = asyncio.run(
            run_load(
                base, texts, clients=clients, duration=duration, malformed=malformed, seed=seed
            )
        )
        figures = summarize(outcomes, time.monotonic() - start)
        figures["batching"] = batch_stats(httpx.get(f"{base}/metrics", timeout=10).text, before)
    figures["warmup"] = {
        "seconds": warmup,
        "requests": len(warm),
        "status_5xx": sum(o.status >= 500 for o in warm),
        "transport_errors": sum(o.status == 0 for o in warm),
    }
    figures["micro_batching"] = micro_batching
    return figures


def fault_check(
    index: Path,
    texts: Sequence[str],
    workdir: Path,
    *,
    clients: int,
    load_before_kill: float = 2.0,
    ready_timeout: float = 300.0,
) -> dict[str, Any]:
    """Add a synonym, SIGKILL the server under load, restart it, look the synonym up."""
    store = workdir / "synonyms.jsonl"
    token = "load-benchmark-token"
    synonym = "zzq load benchmark synonym"
    first = workdir / "server-fault-1.log"
    port = free_port()
    base = f"http://{HOST}:{port}"
    process = start_server(index, port, first, synonyms=store, token=token)
    try:
        wait_ready(base, process, first, ready_timeout)
        body = {"texts": [texts[0]], "k": 1}
        top = httpx.post(f"{base}/v1/normalize", json=body, timeout=60).json()
        concept_id = top["results"][0]["candidates"][0]["concept_id"]
        pairs = {"pairs": [{"concept_id": concept_id, "text": synonym}]}
        added = httpx.post(
            f"{base}/v1/synonyms",
            json=pairs,
            headers={"Authorization": f"Bearer {token}"},
            timeout=60,
        )
        added.raise_for_status()

        async def load_then_kill() -> list[Outcome]:
            task = asyncio.create_task(
                run_load(
                    base,
                    texts,
                    clients=clients,
                    duration=load_before_kill + 3.0,
                    malformed=0.0,
                    seed=1,
                )
            )
            await asyncio.sleep(load_before_kill)
            process.send_signal(signal.SIGKILL)  # no clean shutdown
            return await task

        outcomes = asyncio.run(load_then_kill())
    finally:
        stop_server(process)
    second = workdir / "server-fault-2.log"
    with server(index, second, ready_timeout, synonyms=store) as (base, _):
        concept = httpx.get(f"{base}/v1/concepts/{concept_id}", timeout=30).json()
        body = {"texts": [synonym], "k": 1, "strategy": "d-t"}
        found = httpx.post(f"{base}/v1/normalize", json=body, timeout=60).json()
    candidates = found["results"][0]["candidates"]
    in_concept = synonym in concept.get("domain_synonyms", [])
    top_found = bool(candidates) and candidates[0]["concept_id"] == concept_id
    return {
        "concept_id": concept_id,
        "synonym": synonym,
        "requests_before_kill": sum(o.status == 200 for o in outcomes),
        "killed_with_requests_in_flight": any(o.status == 0 for o in outcomes),
        "synonym_in_concept": in_concept,
        "synonym_top_d_t": top_found,
        "passed": in_concept and top_found,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", type=Path, default=DEFAULT_INDEX)
    parser.add_argument("--mentions", type=Path, default=NCBI_DEVEL)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--duration", type=float, default=60.0)
    parser.add_argument("--warmup", type=float, default=3.0, help="Unmeasured seconds first.")
    parser.add_argument("--malformed", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--skip-fault", action="store_true", help="Only the load figures.")
    args = parser.parse_args(argv)
    if args.clients < 1 or args.duration <= 0 or args.warmup < 0 or not 0 <= args.malformed <= 1:
        parser.error("--clients >= 1, --duration > 0, --warmup >= 0 and 0 <= --malformed <= 1")
    texts = mention_texts(args.mentions)
    report: dict[str, Any] = {
        "index": str(args.index),
        "mentions": len(texts),
        "clients": args.clients,
        "duration_s": args.duration,
        "warmup_s": args.warmup,
        "malformed_share": args.malformed,
    }
    with tempfile.TemporaryDirectory(prefix="termnorm-load-") as tmp:
        workdir = Path(tmp)
        runs = {
            name: measure(
                args.index,
                texts,
                workdir,
                micro_batching=micro,
                clients=args.clients,
                duration=args.duration,
                malformed=args.malformed,
                seed=args.seed,
                warmup=args.warmup,
            )
            for name, micro in (("micro_batching", True), ("no_micro_batching", False))
        }
        report.update(runs)
        on, off = runs["micro_batching"], runs["no_micro_batching"]
        report["ratio_on_over_off"] = {
            key: round(on[key] / off[key], 2) if on[key] and off[key] else None
            for key in ("requests_per_s", "p50_ms", "p99_ms")
        }
        checks = [
            r["status_5xx"] == 0
            and r["transport_errors"] == 0
            and r["malformed_4xx"] == r["malformed"]
            and r["warmup"]["status_5xx"] == r["warmup"]["transport_errors"] == 0
            for r in runs.values()
        ]
        if not args.skip_fault:
            report["fault"] = fault_check(args.index, texts, workdir, clients=args.clients)
            checks.append(report["fault"]["passed"])
    report["passed"] = all(checks)
    print(json.dumps(report, indent=2))
    return 0 if report["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
