"""Encoder inference speed per runtime, its agreement with fp32, and single-query latency.

    python benchmarks/speed.py [--terms-file KG/terms.parquet] [--n-terms 5000] [--threads 1 2]
                               [--index IDX] [--queries 500] [--runtimes torch bf16 onnx onnx-int8]
                               [--json]

1. Encode throughput: ``--n-terms`` distinct dictionary terms (seeded sample of the KG's
   ``terms.parquet``) encoded by each runtime, and by sentence-transformers'
   ``SentenceTransformer(model).encode`` (fp32, its default batch size) as the reference, in
   one run on the same texts, for each ``--threads`` setting; the figure is the ratio
   ``runtime texts/s ÷ sentence-transformers texts/s``.
2. Accuracy: the index (``--index``, built in fp32) is queried with mentions of NCBI devel and
   BC5CDR dev encoded by each runtime (O-T, acc@1 over simple mentions), plus the minimum and
   mean cosine of each runtime's query vectors with fp32's and the share of mentions whose
   top-1 concept is the one fp32 finds. The index vectors are fp32 for every runtime (building
   one index per runtime is too slow on a shared CPU); see the README for what that measures.
3. Latency: ``--queries`` distinct mention texts normalized one at a time (O-T, k=5) on the
   index with one thread; p50 and p99 in ms (query cache misses only: each text once).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch

from termnorm.encoders import TermEncoder, default_model_path
from termnorm.encoders.runtime import Runtime
from termnorm.evaluation.normalization import NormalizationEvaluator
from termnorm.index import TermIndex
from termnorm.mentions import read_mentions
from termnorm.search.domain import SearchSpace
from termnorm.search.matcher import SearchConfig, SpaceMatcher
from termnorm.search.strategies import SearchMode

BENCH = Path("/work/shared/benchmarks")
DATASETS = {
    "ncbi_devel": BENCH / "ncbi_disease" / "NCBIdevelopset_corpus.txt",
    "bc5cdr_dev": BENCH / "bc5cdr_disease" / "dev",
}


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q))


def sample_terms(path: Path, n: int, seed: int = 0) -> list[str]:
    terms = sorted(set(pd.read_parquet(path, columns=["term"])["term"].astype(str)))
    return random.Random(seed).sample(terms, min(n, len(terms)))


def timed(fn: Any) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def throughput(texts: list[str], runtimes: list[Runtime], threads: int) -> dict[str, Any]:
    """texts/s of sentence-transformers and each runtime at ``threads`` threads."""
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(threads)
    st = SentenceTransformer(str(default_model_path()), device="cpu")
    st.encode(texts[:256])  # warm-up
    st_s = timed(lambda: st.encode(texts, normalize_embeddings=True))
    out: dict[str, Any] = {"sentence_transformers_texts_per_s": len(texts) / st_s}
    for runtime in runtimes:
        encoder = TermEncoder.load(device="cpu", runtime=runtime, threads=threads)
        encoder.encode(texts[:256])  # warm-up
        seconds = timed(lambda enc=encoder: enc.encode(texts))
        out[runtime.value] = {
            "texts_per_s": len(texts) / seconds,
            "ratio_vs_sentence_transformers": st_s / seconds,
        }
        print(f"threads={threads} {runtime.value}: {st_s / seconds:.2f}x", file=sys.stderr)
    return out


def accuracy(index: TermIndex, runtimes: list[Runtime]) -> dict[str, Any]:
    """acc@1 per dataset and runtime, and agreement of query vectors / top-1 with fp32."""
    results: dict[str, Any] = {}
    for name, path in DATASETS.items():
        if not path.exists():
            continue
        mentions = read_mentions(path)
        texts = sorted({m.text for m in mentions if m.text.strip()})
        evaluator = NormalizationEvaluator(mentions, (1,))
        reference_vectors: np.ndarray | None = None
        reference_top: list[str] | None = None
        per: dict[str, Any] = {"mentions": len(mentions)}
        for runtime in runtimes:
            encoder = TermEncoder.load(device="cpu", runtime=runtime, threads=1)
            encoder.query_cache = None  # measure the runtime, not the cache
            vectors = encoder.encode(texts)
            top = [str(c) for c in index.terms["concept_id"].to_numpy()[
                index.search_terms(vectors, 1).ids[:, 0]]]  # fmt: skip
            if reference_vectors is None:
                reference_vectors, reference_top = vectors, top
            cos = (vectors * reference_vectors).sum(axis=1)
            matcher = SpaceMatcher(
                SearchSpace(index, encoder), SearchConfig(SearchMode.TERM.strategy)
            )
            metrics = evaluator(matcher)
            per[runtime.value] = {
                "acc@1": metrics[evaluator.primary_metric],
                "min_cosine_vs_fp32": float(cos.min()),
                "mean_cosine_vs_fp32": float(cos.mean()),
                "top1_term_agreement_vs_fp32": float(
                    np.mean([a == b for a, b in zip(top, reference_top or [], strict=True)])
                ),
            }
            print(f"{name} {runtime.value}: {per[runtime.value]}", file=sys.stderr)
        results[name] = per
    return results


def latency(index: TermIndex, queries: list[str], runtimes: list[Runtime]) -> dict[str, Any]:
    """p50/p99 ms of one-query O-T normalize per runtime, one thread."""
    out: dict[str, Any] = {}
    for runtime in runtimes:
        encoder = TermEncoder.load(device="cpu", runtime=runtime, threads=1)
        matcher = SpaceMatcher(SearchSpace(index, encoder), SearchConfig(SearchMode.TERM.strategy))
        matcher.normalize("warm up", 5)
        times = []
        for q in queries:
            start = time.perf_counter()
            matcher.normalize(q, 5)
            times.append((time.perf_counter() - start) * 1000)
        out[runtime.value] = {"p50_ms": percentile(times, 50), "p99_ms": percentile(times, 99)}
        print(f"latency {runtime.value}: {out[runtime.value]}", file=sys.stderr)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--terms-file", type=Path, default=Path("/work/runs/after/kg/medic/terms.parquet")
    )
    parser.add_argument("--n-terms", type=int, default=5000)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--index", type=Path, default=Path("/work/runs/after/idx/medic"))
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--runtimes", nargs="+", default=["torch", "bf16", "onnx", "onnx-int8"])
    parser.add_argument(
        "--skip", nargs="*", default=[], choices=["throughput", "accuracy", "latency"]
    )
    parser.add_argument("--json", action="store_true", help="Print the results as JSON.")
    args = parser.parse_args()
    runtimes = [Runtime(r) for r in args.runtimes]
    report: dict[str, Any] = {"n_terms": args.n_terms, "runtimes": args.runtimes}
    if "throughput" not in args.skip:
        texts = sample_terms(args.terms_file, args.n_terms)
        report["throughput"] = {str(t): throughput(texts, runtimes, t) for t in args.threads}
    torch.set_num_threads(1)
    index = TermIndex.load(args.index)
    if "accuracy" not in args.skip:
        report["accuracy"] = accuracy(index, runtimes)
    if "latency" not in args.skip:
        mentions = read_mentions(DATASETS["ncbi_devel"])
        queries = sorted({m.text for m in mentions if m.text.strip()})
        queries = random.Random(0).sample(queries, min(args.queries, len(queries)))
        report["latency_1_thread"] = latency(index, queries, runtimes)
    print(json.dumps(report, indent=2) if args.json else report)


if __name__ == "__main__":
    main()
