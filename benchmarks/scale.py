"""UMLS-size index benchmark: build, serve and check an index of N synthetic term vectors.

    python benchmarks/scale.py --work DIR [--size 15000000] [--queries 10000]
        [--real IDX_DIR ...] [--memory-budget 8GB] [--backend auto] [--nlist N] [--m M]
        [--nprobe 16,32,64] [--rerank 4,10] [--latency-queries 1000] [--threads 1]
        [--stage all|generate|build|truth|search] [--json OUT]

Encoding 15 M terms is out of reach on a CPU, so the vectors are synthesised with the
structure of real ones, chunk by chunk (never all N in RAM):

* real term vectors are read from the index folders ``--real`` (default: the MEDIC and HPO
  indexes idx/medic and idx/hpo of the README and docs/); their covariance Σ (about their mean) shapes all noise;
* each synthetic concept takes a random real vector ``r`` as anchor and a concept-level offset
  ``ε_c ~ N(0, Σ)``; it has ``1 + Poisson(2.5)`` terms (UMLS: ~3.3 English terms per concept),
  term ``t = unit(r + 0.6 ε_c + 0.4 ε_t)`` with ``ε_t ~ N(0, Σ)`` per term;
* queries are ``unit(t + 0.4 ε_q)`` for random database rows ``t`` (a misspelt or paraphrased
  synonym of a known term).

Every chunk is generated from ``(seed, chunk number)``, so a stage can be rerun alone.

Stages (each its own process, so each peak RSS is its own; ``all`` runs them in turn):

``generate``  vectors.npy (float16 [N, d], written chunk by chunk) and queries.npy;
``build``     the backend :func:`termnorm.index.choose_backend` picks for ``--memory-budget``
              (or ``--backend``/``--nlist``/``--m``), filled by
              :func:`termnorm.index.factory.build_vector_index` block by block from the file;
``truth``     exact top-10 of every query by a streaming blockwise scan of vectors.npy
              (database blocks outer, so the file is read once; checkpointed, resumable);
``search``    loads the index as a server would, then for each ``nprobe`` x ``rerank``:
              recall@1 / recall@10 against the truth (over-fetch ``rerank x 10`` candidates,
              re-score exactly against the float16 vectors memory-mapped from disk) and the
              latency of one query at a time (p50/p99 over ``--latency-queries``).

recall@1 = share of queries whose exact nearest row is ranked first; recall@10 = mean share
of the exact top-10 found in the returned top-10. Results go to ``DIR/<stage>.json`` and the
summary to ``--json``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")  # before numpy/faiss: threads are --threads
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np

from termnorm.index import Backend, SearchResult
from termnorm.index.choose import BackendSpec, choose_backend, estimate_bytes, parse_bytes
from termnorm.index.exact import merge_results, rerank_exact, select_topk
from termnorm.index.factory import build_vector_index
from termnorm.index.faiss_backend import FaissIndex, import_faiss
from termnorm.index.vectors import NpyRows, NpyWriter

DEFAULT_REAL = tuple(
    str(Path(__file__).resolve().parents[1] / "idx" / name) for name in ("medic", "hpo")
)  # the working folders of the README and docs/
CHUNK = 1 << 16
K = 10
CONCEPT_SCALE, TERM_SCALE, QUERY_SCALE = 0.6, 0.4, 0.4
MEAN_EXTRA_TERMS = 2.5
STAGES = ("generate", "build", "truth", "search")


def peak_rss_mib() -> float:
    """Peak resident set size of this process (Linux: KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def folder_mib(path: Path) -> float:
    files = [path] if path.is_file() else [f for f in path.rglob("*") if f.is_file()]
    return sum(f.stat().st_size for f in files) / (1 << 20)


def unit(x: np.ndarray) -> np.ndarray:
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


# --------------------------------------------------------------------------- generate
class Synth:
    """Seeded generator of synthetic term vectors around real anchors (module docstring)."""

    def __init__(self, real_dirs: list[str], seed: int) -> None:
        blocks = [np.load(Path(d) / "term_vectors.npy", mmap_mode="r") for d in real_dirs]
        self.anchors = unit(np.concatenate([np.asarray(b, dtype=np.float32) for b in blocks]))
        centred = self.anchors - self.anchors.mean(axis=0)
        cov = centred.T @ centred / len(centred)
        eigval, eigvec = np.linalg.eigh(cov)
        self.shape = (eigvec * np.sqrt(np.maximum(eigval, 0))).T.astype(np.float32)  # g@S ~ Σ
        self.dim = self.anchors.shape[1]
        self.seed = seed

    def noise(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return rng.standard_normal((n, self.dim), dtype=np.float32) @ self.shape

    def chunk(self, index: int, rows: int) -> np.ndarray:
        """Rows of chunk ``index`` (float32 unit vectors), concepts cut at the chunk end."""
        rng = np.random.default_rng([self.seed, index])
        sizes = 1 + rng.poisson(MEAN_EXTRA_TERMS, rows)  # more concepts than needed
        sizes = sizes[: int(np.searchsorted(np.cumsum(sizes), rows)) + 1]
        owner = np.repeat(np.arange(len(sizes)), sizes)[:rows]
        anchors = self.anchors[rng.integers(0, len(self.anchors), len(sizes))]
        centres = anchors + CONCEPT_SCALE * self.noise(rng, len(sizes))
        return unit(centres[owner] + TERM_SCALE * self.noise(rng, rows))


def stage_generate(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    synth = Synth(args.real, args.seed)
    rng = np.random.default_rng([args.seed, 10**9])
    query_rows = np.sort(rng.choice(args.size, size=min(args.queries, args.size), replace=False))
    queries = np.empty((len(query_rows), synth.dim), dtype=np.float32)
    start = time.perf_counter()
    with NpyWriter(work / "vectors.npy", args.size, synth.dim) as writer:
        for c, first in enumerate(range(0, args.size, CHUNK)):
            rows = min(CHUNK, args.size - first)
            block = synth.chunk(c, rows)
            writer.append(block)
            lo, hi = np.searchsorted(query_rows, [first, first + rows])
            queries[lo:hi] = block[query_rows[lo:hi] - first]
    qrng = np.random.default_rng([args.seed, 10**9 + 1])
    queries = unit(queries + QUERY_SCALE * synth.noise(qrng, len(queries)))
    np.save(work / "queries.npy", queries)
    np.save(work / "query_rows.npy", query_rows)
    return {
        "generate_s": round(time.perf_counter() - start, 1),
        "real_anchors": len(synth.anchors),
        "vectors_mib": round(folder_mib(work / "vectors.npy"), 1),
    }


# --------------------------------------------------------------------------- build
def spec_for(args: argparse.Namespace, n: int, dim: int) -> BackendSpec:
    budget = parse_bytes(args.memory_budget)
    if args.backend == "auto":
        spec = choose_backend(n, dim, budget)
    else:
        from termnorm.index.faiss_backend import DEFAULT_PARAMS

        spec = BackendSpec(Backend(args.backend), dict(DEFAULT_PARAMS[Backend(args.backend)]))
    params = dict(spec.params)
    if args.nlist:
        params["nlist"] = args.nlist
    if args.m:
        params["m"] = args.m
    reason = spec.reason if params == spec.params else f"{spec.reason}; overridden: {params}"
    return BackendSpec(spec.backend, params, reason)


def stage_build(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    faiss = import_faiss()
    faiss.omp_set_num_threads(args.threads)
    blocks = 0

    def count(_first: int, _block: np.ndarray) -> None:
        nonlocal blocks
        blocks += 1

    with NpyRows(work / "vectors.npy") as vectors:
        n, dim = vectors.shape
        spec = spec_for(args, n, dim)
        start = time.perf_counter()
        index = build_vector_index(spec, vectors, on_block=count)
        build_s = time.perf_counter() - start
    assert isinstance(index, FaissIndex), "the scale benchmark measures faiss backends"
    index.save(work / "index")
    return {
        "backend": spec.backend.value,
        "reason": spec.reason,
        "params": index.params,
        "memory_budget": parse_bytes(args.memory_budget),
        "estimated_bytes": estimate_bytes(spec.backend, n, dim, index.params),
        "actual_bytes": index.nbytes,
        "build_s": round(build_s, 1),
        "blocks_added": blocks,
        "build_peak_rss_mib": round(peak_rss_mib(), 1),
        "index_mib": round(folder_mib(work / "index"), 1),
    }


# --------------------------------------------------------------------------- truth
def stage_truth(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    queries = np.load(work / "queries.npy")
    partial = work / "truth_partial.npz"
    if partial.is_file():
        saved = np.load(partial)
        best, done = SearchResult(saved["scores"], saved["ids"]), int(saved["done"])
    else:
        best, done = SearchResult.empty(len(queries), K), 0
    start, last_save = time.perf_counter(), time.perf_counter()
    q_block = 1024
    with NpyRows(work / "vectors.npy") as vectors:
        n = len(vectors)
        for first in range(done, n, CHUNK):
            block = vectors[first : first + CHUNK].astype(np.float32)
            ids_row = np.arange(first, first + len(block), dtype=np.int64)
            for qs in range(0, len(queries), q_block):
                scores = queries[qs : qs + q_block] @ block.T
                ids = np.broadcast_to(ids_row, scores.shape)
                top = select_topk(scores, ids, K)
                cur = SearchResult(best.scores[qs : qs + q_block], best.ids[qs : qs + q_block])
                merged = merge_results(cur, top, K)
                best.scores[qs : qs + q_block], best.ids[qs : qs + q_block] = merged
            done = first + len(block)
            if time.perf_counter() - last_save > 60 or done == n:
                np.savez(partial, scores=best.scores, ids=best.ids, done=done)
                last_save = time.perf_counter()
            if args.max_seconds and time.perf_counter() - start > args.max_seconds and done < n:
                return {"truth_done_rows": done, "truth_complete": False}
    np.save(work / "truth_ids.npy", best.ids)
    return {
        "truth_s_this_run": round(time.perf_counter() - start, 1),
        "truth_complete": True,
        "truth_peak_rss_mib": round(peak_rss_mib(), 1),
    }


# --------------------------------------------------------------------------- search
def recall(got: np.ndarray, want: np.ndarray) -> tuple[float, float]:
    r1 = float(np.mean(got[:, 0] == want[:, 0]))
    r10 = float(np.mean([len(set(g) & set(w)) / K for g, w in zip(got, want, strict=True)]))
    return r1, r10


def stage_search(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    faiss = import_faiss()
    faiss.omp_set_num_threads(args.threads)
    start = time.perf_counter()
    index = FaissIndex.load(work / "index")
    vectors = np.load(work / "vectors.npy", mmap_mode="r")  # float16, for exact re-scoring
    load_s = time.perf_counter() - start
    queries, truth = np.load(work / "queries.npy"), np.load(work / "truth_ids.npy")
    ivf = faiss.extract_index_ivf(index._index)
    rows = []
    for nprobe in args.nprobe:
        ivf.nprobe = nprobe
        for rerank in args.rerank:
            fetch = K * rerank

            def one(q: np.ndarray, fetch: int = fetch) -> SearchResult:
                rough = index.search(q, fetch)
                return rerank_exact(vectors, q, rough, K) if fetch > K else rough

            t0 = time.perf_counter()
            got = one(queries).ids
            batch_s = time.perf_counter() - t0
            r1, r10 = recall(got, truth)
            lat = []
            for q in queries[: args.latency_queries]:
                t0 = time.perf_counter()
                one(q[None, :])
                lat.append((time.perf_counter() - t0) * 1000)
            rows.append({
                "nprobe": nprobe, "rerank": rerank, "recall@1": round(r1, 4),
                "recall@10": round(r10, 4), "p50_ms": round(float(np.percentile(lat, 50)), 2),
                "p99_ms": round(float(np.percentile(lat, 99)), 2),
                "batch_qps": round(len(queries) / batch_s, 1),
            })  # fmt: skip
            print(json.dumps(rows[-1]), flush=True)
    return {
        "load_s": round(load_s, 2),
        "serve_peak_rss_mib": round(peak_rss_mib(), 1),
        "settings": rows,
    }


# --------------------------------------------------------------------------- driver
RUNNERS = {
    "generate": stage_generate,
    "build": stage_build,
    "truth": stage_truth,
    "search": stage_search,
}


def ints(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x]


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--work", type=Path, required=True, help="Folder for the stage files.")
    p.add_argument("--size", type=int, default=15_000_000, help="Synthetic vectors (rows).")
    p.add_argument("--queries", type=int, default=10_000)
    p.add_argument("--real", nargs="+", default=list(DEFAULT_REAL), help="Index folders.")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--memory-budget", default="8GB")
    p.add_argument("--backend", default="auto", choices=["auto"] + [b.value for b in Backend])
    p.add_argument("--nlist", type=int, default=0, help="Override the chosen list count.")
    p.add_argument("--m", type=int, default=0, help="Override the chosen PQ code size.")
    p.add_argument("--nprobe", type=ints, default=[16, 32, 64])
    p.add_argument("--rerank", type=ints, default=[1, 4, 10])
    p.add_argument("--latency-queries", type=int, default=1000)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--max-seconds", type=float, default=0, help="truth: stop and checkpoint.")
    p.add_argument("--stage", default="all", choices=("all", *STAGES))
    p.add_argument("--json", type=Path, default=None)
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    if args.stage == "all":
        raw = sys.argv[1:] if argv is None else argv
        for stage in STAGES:
            cmd = [sys.executable, __file__, *raw, "--stage", stage]
            subprocess.run(cmd, check=True)
        summary: dict[str, Any] = {"size": args.size, "queries": args.queries}
        for stage in STAGES:
            summary.update(json.loads((args.work / f"{stage}.json").read_text()))
        text = json.dumps(summary, indent=2)
        print(text)
        if args.json is not None:
            args.json.write_text(text + "\n")
        return
    result = {"stage": args.stage, **RUNNERS[args.stage](args, args.work)}
    result[f"{args.stage}_peak_rss_mib"] = round(peak_rss_mib(), 1)
    (args.work / f"{args.stage}.json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
