"""Annotate throughput of ``termnorm serve``, and how fast ``/v1/health`` answers meanwhile.

    python benchmarks/annotate_load.py [--index IDX] [--documents NCBI_DEVEL] [--clients 8]
                                       [--duration 30] [--warmup 3] [--chars 5000] [--k 5]

``termnorm serve`` is started as a subprocess on ``127.0.0.1`` (a free port) over
``--index``; once ``/v1/ready`` answers 200, ``--clients`` concurrent asyncio clients
(``httpx.AsyncClient``) send ``POST /v1/annotate`` for ``--duration`` seconds, each request
one document of about ``--chars`` characters (PubMed abstracts of ``--documents``, a
PubTator file, joined in a seeded order) with ``k`` = ``--k``, while one more client asks
``GET /v1/health`` every ``--probe-ms`` milliseconds. ``--warmup`` seconds of the same
traffic come first and are not measured (the dictionary's compilation, the first forward
passes). Printed as JSON: annotate requests/s, characters/s, p50/p99 latency and mean answer
bytes of the answered requests (200), the p50/p99/max latency of ``/v1/health``, and the
number of 5xx answers and transport errors (both must be 0: the exit status is 1 otherwise).

Traffic goes to ``127.0.0.1`` only; every loop is bounded in time and count, and the server
is stopped (SIGTERM, then SIGKILL) before the script returns.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # load.py: the server's helpers
from load import DEFAULT_INDEX, NCBI_DEVEL, server

from termnorm.mentions.pubtator import read_pubtator_documents

MAX_REQUESTS_PER_CLIENT = 1_000_000  # the count bound of each client's loop


def documents(path: Path, chars: int, count: int, seed: int) -> list[str]:
    """``count`` texts of about ``chars`` characters (at least one abstract each): the
    abstracts of ``path`` in a seeded order, joined by blank lines, reused in turn."""
    abstracts = list(read_pubtator_documents(path).values())
    if not abstracts:
        raise ValueError(f"{path}: no document (a PubTator file is expected)")
    random.Random(seed).shuffle(abstracts)
    texts, at = [], 0
    for _ in range(count):
        parts: list[str] = []
        while not parts or sum(len(p) + 2 for p in parts) < chars:
            parts.append(abstracts[at % len(abstracts)])
            at += 1
        texts.append("\n\n".join(parts))
    return texts


async def _annotate(
    client: httpx.AsyncClient,
    base: str,
    texts: Sequence[str],
    k: int,
    stop_at: float,
    out: list[tuple[int, float, int, int]],
) -> None:
    """Annotate ``texts`` in turn until ``stop_at``: ``(status, seconds, chars, bytes)`` each
    (status 0: the transport failed)."""
    for i in range(MAX_REQUESTS_PER_CLIENT):
        if time.monotonic() >= stop_at:
            return
        text = texts[i % len(texts)]
        body = {"documents": [{"id": str(i), "text": text}], "k": k}
        start = time.perf_counter()
        try:
            answer = await client.post(f"{base}/v1/annotate", json=body)
            status, size = answer.status_code, len(answer.content)
        except httpx.TransportError:
            status, size = 0, 0
        out.append((status, time.perf_counter() - start, len(text), size))


async def _probe(
    client: httpx.AsyncClient, base: str, every_s: float, stop_at: float, out: list[float]
) -> None:
    """``GET /v1/health`` every ``every_s`` until ``stop_at``: each latency (seconds; an
    answer other than 200 or a transport error counts as infinite)."""
    for _ in range(MAX_REQUESTS_PER_CLIENT):
        if time.monotonic() >= stop_at:
            return
        start = time.perf_counter()
        try:
            ok = (await client.get(f"{base}/v1/health")).status_code == 200
        except httpx.TransportError:
            ok = False
        out.append(time.perf_counter() - start if ok else float("inf"))
        await asyncio.sleep(every_s)


async def run(
    base: str, texts: Sequence[str], *, clients: int, duration: float, k: int, probe_s: float
) -> tuple[list[tuple[int, float, int, int]], list[float]]:
    """``clients`` annotating clients and one health probe for ``duration`` seconds."""
    annotated: list[tuple[int, float, int, int]] = []
    health: list[float] = []
    stop_at = time.monotonic() + duration
    limits = httpx.Limits(max_connections=clients + 1)
    async with httpx.AsyncClient(timeout=600, limits=limits) as client:
        shares = [texts[i::clients] or texts for i in range(clients)]
        await asyncio.gather(
            *(_annotate(client, base, share, k, stop_at, annotated) for share in shares),
            _probe(client, base, probe_s, stop_at, health),
        )
    return annotated, health


def _ms(values: Sequence[float], q: float) -> float | None:
    return round(float(np.percentile(values, q)) * 1000, 1) if values else None


def summarize(
    annotated: Sequence[tuple[int, float, int, int]], health: Sequence[float], seconds: float
) -> dict[str, Any]:
    """The figures of one measured run (the module docstring)."""
    ok = [(s, chars, size) for status, s, chars, size in annotated if status == 200]
    latencies = [s for s, _, _ in ok]
    answered = [h for h in health if h != float("inf")]
    return {
        "seconds": round(seconds, 1),
        "annotate_requests": len(annotated),
        "annotate_200": len(ok),
        "annotate_requests_per_s": round(len(ok) / seconds, 2),
        "annotate_chars_per_s": round(sum(c for _, c, _ in ok) / seconds),
        "annotate_p50_ms": _ms(latencies, 50),
        "annotate_p99_ms": _ms(latencies, 99),
        "answer_bytes_mean": round(sum(b for _, _, b in ok) / len(ok)) if ok else None,
        "status_4xx": sum(400 <= status < 500 for status, *_ in annotated),
        "status_5xx": sum(status >= 500 for status, *_ in annotated),
        "transport_errors": sum(status == 0 for status, *_ in annotated),
        "health_probes": len(health),
        "health_failed": len(health) - len(answered),
        "health_p50_ms": _ms(answered, 50),
        "health_p99_ms": _ms(answered, 99),
        "health_max_ms": round(max(answered) * 1000, 1) if answered else None,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", type=Path, default=DEFAULT_INDEX)
    parser.add_argument("--documents", type=Path, default=NCBI_DEVEL)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--duration", type=float, default=30.0)
    parser.add_argument("--warmup", type=float, default=3.0, help="Unmeasured seconds first.")
    parser.add_argument("--chars", type=int, default=5000, help="Characters a request.")
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--probe-ms", type=float, default=50.0, help="Health probe interval.")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.clients < 1 or args.duration <= 0 or args.warmup < 0 or args.chars < 1:
        parser.error("--clients >= 1, --duration > 0, --warmup >= 0 and --chars >= 1")
    texts = documents(args.documents, args.chars, 4 * args.clients, args.seed)
    options = {"clients": args.clients, "k": args.k, "probe_s": args.probe_ms / 1000}
    report: dict[str, Any] = {
        "index": str(args.index),
        "clients": args.clients,
        "chars_per_request": round(sum(map(len, texts)) / len(texts)),
        "k": args.k,
    }
    with (
        tempfile.TemporaryDirectory(prefix="termnorm-annotate-load-") as tmp,
        server(args.index, Path(tmp) / "server.log", 300.0) as (base, _),
    ):
        if args.warmup > 0:
            asyncio.run(run(base, texts, duration=args.warmup, **options))
        start = time.monotonic()
        annotated, health = asyncio.run(run(base, texts, duration=args.duration, **options))
        report.update(summarize(annotated, health, time.monotonic() - start))
    checks = (report["status_5xx"], report["transport_errors"], report["health_failed"])
    report["passed"] = checks == (0, 0, 0)
    print(json.dumps(report, indent=2))
    return 0 if report["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
