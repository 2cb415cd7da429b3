"""Annotate throughput of ``termnorm serve`` at 1, 8 and 32 clients, beside the batch path's
on the same documents in the same run, and how fast ``/v1/health`` answers meanwhile.

    python benchmarks/annotate_load.py [--index IDX] [--documents NCBI_DEVEL]
                                       [--clients 1,8,32] [--duration 30] [--warmup 3]
                                       [--chars 3500] [--k 5]

``termnorm serve`` is started as a subprocess on ``127.0.0.1`` (a free port) over
``--index``; once ``/v1/ready`` answers 200, for each number of ``--clients`` in turn, that
many concurrent asyncio clients (``httpx.AsyncClient``) send ``POST /v1/annotate`` for
``--duration`` seconds, each request one document of about ``--chars`` characters (PubMed
abstracts of ``--documents``, a PubTator file, joined in a seeded order; 4 per client of the
largest level, the same for every level) with ``k`` = ``--k``, while one more client asks
``GET /v1/health`` every ``--probe-ms`` milliseconds. ``--warmup`` seconds of the same
traffic come first at each level and are not measured (the dictionary's compilation, the
first forward passes). Per level: annotate requests/s, characters/s, p50/p99 latency and
mean answer bytes of the answered requests (200), the server's CPU time per answered request
(``/proc``: the figure a machine shared with other jobs does not skew), the p50/p99/max
latency of ``/v1/health``, and the number of 5xx answers and transport errors (all must be
0: the exit status is 1 otherwise).

Then the server is stopped and **the batch path** annotates the same documents in this
process (``annotate_chunk``, what ``termnorm annotate`` runs for a file, with the same
annotate spec over ``--index``): documents/s and CPU time per document. Each level's
``vs_batch`` is its requests/s over the batch's documents/s, ``cpu_vs_batch`` the batch's CPU
time per document over the server's per request (1.0: the service costs what the batch
path does). Printed as one JSON object; ``rows`` is the table.

Traffic goes to ``127.0.0.1`` only; every loop is bounded in time and count, and the server
is stopped (SIGTERM, then SIGKILL) before the script returns.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
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

from termnorm.annotate.chunks import annotate_chunk
from termnorm.annotate.detectors import build_annotator
from termnorm.annotate.formats import InputDocument, OutputFormat
from termnorm.annotate.spec import AnnotateSpec
from termnorm.mentions.pubtator import read_pubtator_documents
from termnorm.search.spec import PipelineSpec

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


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far, all its threads (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def batch_path(index: Path, texts: Sequence[str], k: int) -> dict[str, Any]:
    """Documents/s and CPU ms per document of the batch path (``annotate_chunk``, as
    ``termnorm annotate`` runs a file) over ``texts``, after one unmeasured document."""
    annotator = build_annotator(AnnotateSpec(search=PipelineSpec(index=index), k=k))
    docs = [InputDocument(str(i), text) for i, text in enumerate(texts)]
    annotate_chunk(annotator, docs[:1], OutputFormat.JSONL)  # loads the model and dictionary
    wall, cpu = time.perf_counter(), time.process_time()
    annotate_chunk(annotator, docs, OutputFormat.JSONL)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return {
        "documents": len(docs),
        "seconds": round(wall, 1),
        "documents_per_s": round(len(docs) / wall, 2),
        "cpu_ms_per_document": round(1000 * cpu / len(docs), 1),
    }


def compare(levels: Sequence[dict[str, Any]], batch: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per level: clients, requests/s, p50/p99, CPU ms a request, health p99, and
    the ratios to the batch path (the module docstring)."""
    rows = []
    for level in levels:
        cpu = level["cpu_ms_per_request"]
        rows.append(
            {
                "clients": level["clients"],
                "requests_per_s": level["annotate_requests_per_s"],
                "p50_ms": level["annotate_p50_ms"],
                "p99_ms": level["annotate_p99_ms"],
                "cpu_ms_per_request": cpu,
                "health_p99_ms": level["health_p99_ms"],
                "vs_batch": round(level["annotate_requests_per_s"] / batch["documents_per_s"], 2),
                "cpu_vs_batch": round(batch["cpu_ms_per_document"] / cpu, 2) if cpu else None,
            }
        )
    return rows


def client_counts(value: str) -> list[int]:
    """``"1,8,32"`` as ``[1, 8, 32]`` (each at least 1)."""
    counts = [int(part) for part in value.split(",") if part.strip()]
    if not counts or min(counts) < 1:
        raise argparse.ArgumentTypeError(f"--clients: positive numbers, e.g. 1,8,32; got {value!r}")
    return counts


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", type=Path, default=DEFAULT_INDEX)
    parser.add_argument("--documents", type=Path, default=NCBI_DEVEL)
    parser.add_argument("--clients", type=client_counts, default=[1, 8, 32])
    parser.add_argument("--duration", type=float, default=30.0, help="Measured seconds a level.")
    parser.add_argument("--warmup", type=float, default=3.0, help="Unmeasured seconds first.")
    parser.add_argument("--chars", type=int, default=3500, help="Characters a request.")
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--probe-ms", type=float, default=50.0, help="Health probe interval.")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.duration <= 0 or args.warmup < 0 or args.chars < 1:
        parser.error("--duration > 0, --warmup >= 0 and --chars >= 1")
    texts = documents(args.documents, args.chars, 4 * max(args.clients), args.seed)
    report: dict[str, Any] = {
        "index": str(args.index),
        "chars_per_request": round(sum(map(len, texts)) / len(texts)),
        "k": args.k,
        "load_before": round(os.getloadavg()[0], 1),
    }
    levels = []
    with (
        tempfile.TemporaryDirectory(prefix="termnorm-annotate-load-") as tmp,
        server(args.index, Path(tmp) / "server.log", 300.0) as (base, process),
    ):
        for clients in args.clients:
            options = {"clients": clients, "k": args.k, "probe_s": args.probe_ms / 1000}
            if args.warmup > 0:
                asyncio.run(run(base, texts, duration=args.warmup, **options))
            start, cpu = time.monotonic(), cpu_seconds(process.pid)
            annotated, health = asyncio.run(run(base, texts, duration=args.duration, **options))
            level = {"clients": clients, **summarize(annotated, health, time.monotonic() - start)}
            spent = cpu_seconds(process.pid) - cpu
            ok = level["annotate_200"]
            level["cpu_ms_per_request"] = round(1000 * spent / ok, 1) if ok else None
            levels.append(level)
    report["batch"] = batch_path(args.index, texts, args.k)
    report["load_after"] = round(os.getloadavg()[0], 1)
    report["rows"] = compare(levels, report["batch"])
    report["levels"] = levels
    checks = [(lv["status_5xx"], lv["transport_errors"], lv["health_failed"]) for lv in levels]
    report["passed"] = all(check == (0, 0, 0) for check in checks)
    print(json.dumps(report, indent=2))
    return 0 if report["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
