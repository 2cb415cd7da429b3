"""Time and memory to build an index for a KG folder, and single-term query latency on it.

    python benchmarks/index_build.py KG_DIR [--model MODEL_DIR] [--backend auto] [--queries 200]
                                            [--threads N] [--index DIR] [--json]

Prints build time (encoding + indexing), peak RSS of this process, index size on disk,
load time, and the latency of normalizing one term at a time (median and p95 over
``--queries`` terms sampled from the KG with a fixed seed), plus batch throughput.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import torch

from termnorm.encoders import TermEncoder
from termnorm.index import TermIndex
from termnorm.kg import KnowledgeGraph
from termnorm.search import Normalizer


def peak_rss_mib() -> float:
    """Peak resident set size of this process so far (Linux reports KiB, macOS bytes)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1 << 20) if sys.platform == "darwin" else peak / 1024


def folder_mib(folder: Path) -> float:
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file()) / (1 << 20)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def run(args: argparse.Namespace) -> dict[str, Any]:
    kg = KnowledgeGraph.load(args.kg)
    encoder = TermEncoder.load(args.model, pooling=args.pooling)
    if args.index is not None:  # latency only, on an index built earlier
        build_s, rss_build, out = float("nan"), float("nan"), args.index
        index = TermIndex.load(out)
    else:
        start = time.perf_counter()
        index = TermIndex.build(
            kg, encoder, backend=args.backend, batch_size=args.batch_size, kg_path=args.kg
        )
        build_s = time.perf_counter() - start
        rss_build = peak_rss_mib()
        out = Path(args.out or tempfile.mkdtemp(prefix="termnorm-bench-")) / "index"
        index.save(out)
    start = time.perf_counter()
    loaded = TermIndex.load(out)
    load_s = time.perf_counter() - start
    normalizer = Normalizer(loaded, encoder)
    terms = random.Random(0).sample(list(kg.terms["term"]), min(args.queries, len(kg.terms)))
    normalizer.normalize(terms[0], k=args.k)  # warm-up
    latencies = []
    for term in terms:
        t0 = time.perf_counter()
        normalizer.normalize(term, k=args.k)
        latencies.append((time.perf_counter() - t0) * 1000)
    t0 = time.perf_counter()
    normalizer.normalize_batch(terms, k=args.k)
    batch_s = time.perf_counter() - t0
    return {
        "kg": str(args.kg),
        "model": str(encoder.path),
        "device": str(encoder.device),
        "terms": len(index.terms),
        "concepts": len(index.concepts),
        "backend_terms": index.card["backend"]["terms"]["backend"],
        "build_s": round(build_s, 2),
        "peak_rss_mib_after_build": round(rss_build, 1),
        "index_mib_on_disk": round(folder_mib(out), 1),
        "load_s": round(load_s, 3),
        "query_ms_median": round(percentile(latencies, 0.5), 2),
        "query_ms_p95": round(percentile(latencies, 0.95), 2),
        "batch_terms_per_s": round(len(terms) / batch_s, 1),
        "k": args.k,
        "torch_threads": torch.get_num_threads(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kg", type=Path, help="KG folder")
    parser.add_argument("--model", type=Path, default=None, help="encoder folder")
    parser.add_argument("--pooling", default=None, help="cls or mean")
    parser.add_argument("--backend", default="auto")
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("-k", type=int, default=5)
    parser.add_argument("--out", type=Path, default=None, help="where to write the index")
    parser.add_argument("--index", type=Path, default=None, help="skip the build: time this index")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    figures = run(args)
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        for key, value in figures.items():
            print(f"{key:28s} {value}")


if __name__ == "__main__":
    main()
