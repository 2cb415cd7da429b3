"""Encoder speed per runtime, its accuracy, single-query latency, index builds, first run.

    python benchmarks/speed.py [--terms-file KG/terms.parquet] [--n-terms 5000] [--threads 1 2]
                               [--model DIR]
                               [--index IDX] [--queries 500] [--runtimes torch onnx onnx-int8]
                               [--build-kg KG] [--build-runtimes onnx-int8]
                               [--baseline-src OLD/src] [--skip ...] [--json]

Sections (``--skip`` leaves any out):

``throughput``  ``--n-terms`` distinct dictionary terms (seeded sample of ``--terms-file``)
    encoded by sentence-transformers' ``SentenceTransformer(MiniLM).encode`` (fp32, its default
    batch size: the reference), by MiniLM on torch and each runtime, and with ``--model``
    (e.g. an imported multilingual-e5-small) by that model on each runtime, in one run on the
    same texts, for each ``--threads``; rounds interleave the engines and each keeps its best
    of :data:`ROUNDS` (a shared machine slows whichever engine it happens to hit). Figure:
    texts/s and the ratios to sentence-transformers and to MiniLM on torch, also printed
    (standard error) as one Markdown table.
``accuracy``    NCBI devel and BC5CDR dev mentions normalized (O-T, acc@1) on ``--index``
    (built in fp32) with query vectors of each runtime, with the cosine of those vectors to
    fp32's and the share of mentions whose top-1 term is fp32's.
``latency``     ``--queries`` distinct mention texts (NCBI devel + BC5CDR dev) normalized one at a time (O-T,
    k=5) with one thread, each text once (query-cache misses): p50/p99 of the whole call and
    of its spans: the encoder's forward pass, the term search (the int8 pre-scan of
    :mod:`termnorm.search.prescan` where the code has it) and the rest (tokenization,
    ranking, candidates, validation).
``build``       ``--build-kg`` indexed with each ``--build-runtimes`` (``termnorm index build``
    code path, default threads or ``--build-threads``): wall seconds, and the accuracy section's acc@1 on that index
    with queries of the same runtime and of torch fp32.
``first_run``   ``termnorm normalize "short stature"`` in a fresh process with an empty
    ``TERMNORM_CACHE``, so it builds the default index (HPO) first: wall seconds.

With ``--baseline-src`` (the ``src`` folder of another termnorm checkout), ``build`` also
builds with that code's ``index build`` (torch, its default) and ``first_run`` also runs that
code, in the same run: before/after ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
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
from termnorm.search.space_matcher import SearchConfig, SpaceMatcher
from termnorm.search.strategies import SearchMode

ROOT = Path(__file__).resolve().parents[1]
# the data next to the checkout, and the README's working folders (kg/medic, idx/medic)
BENCH = ROOT.parent / "shared" / "benchmarks"
DATASETS = {
    "ncbi_devel": BENCH / "ncbi_disease" / "NCBIdevelopset_corpus.txt",
    "bc5cdr_dev": BENCH / "bc5cdr_disease" / "dev",
}
ROUNDS = 3
SECTIONS = ["throughput", "accuracy", "latency", "build", "first_run"]


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q))


def sample_terms(path: Path, n: int, seed: int = 0) -> list[str]:
    terms = sorted(set(pd.read_parquet(path, columns=["term"])["term"].astype(str)))
    return random.Random(seed).sample(terms, min(n, len(terms)))


def timed(fn: Any) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _engine(model: Path | None, runtime: Runtime, threads: int, texts: list[str]) -> Any:
    """``encode(texts)`` of ``model`` on ``runtime``, warmed up, without its query cache."""
    encoder = TermEncoder.load(model, device="cpu", runtime=runtime, threads=threads)
    encoder.query_cache = None
    encoder.encode(texts[:256])  # warm-up (and the ONNX export, when not cached)
    return lambda: encoder.encode(texts)


def throughput(
    texts: list[str], runtimes: list[Runtime], threads: int, model: Path | None = None
) -> dict[str, Any]:
    """texts/s of sentence-transformers (MiniLM) and of each runtime of MiniLM and, when
    given, of ``model``, at ``threads`` threads, each the best of :data:`ROUNDS` interleaved
    rounds. Rows: ``{"minilm": {runtime: ...}, "model": {runtime: ...}}``, each with its
    ratio to sentence-transformers and to MiniLM on torch (always timed: the reference of
    the multilingual speed target)."""
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(threads)
    st = SentenceTransformer(str(default_model_path()), device="cpu")
    st.encode(texts[:256])  # warm-up
    engines: dict[tuple[str, str], Any] = {
        ("minilm", "sentence_transformers"): lambda: st.encode(texts, normalize_embeddings=True)
    }
    minilm = [Runtime.TORCH, *[r for r in runtimes if r is not Runtime.TORCH]]
    for runtime in minilm:
        engines["minilm", runtime.value] = _engine(None, runtime, threads, texts)
    for runtime in runtimes if model is not None else []:
        engines["model", runtime.value] = _engine(model, runtime, threads, texts)
    best = dict.fromkeys(engines, float("inf"))
    for _ in range(ROUNDS):
        for key, run in engines.items():
            best[key] = min(best[key], timed(run))
    reference, torch_s = best["minilm", "sentence_transformers"], best["minilm", "torch"]
    out: dict[str, Any] = {"threads": threads, "minilm": {}, "model": {}}
    for (row, name), seconds in best.items():
        out[row][name] = {
            "texts_per_s": len(texts) / seconds,
            "ratio_vs_sentence_transformers": reference / seconds,
            "ratio_vs_minilm_torch": torch_s / seconds,
        }
    return out


def throughput_table(runs: dict[str, dict[str, Any]], model: Path | None) -> str:
    """The throughput runs as one Markdown table: a row per model and engine, a column per
    thread count (texts/s, ÷ MiniLM torch, ÷ sentence-transformers)."""
    names = {"minilm": "MiniLM", "model": model.name if model is not None else ""}
    header = ["engine", *(f"{t} thread(s): texts/s (÷ MiniLM torch, ÷ ST)" for t in runs)]
    lines = ["| " + " | ".join(header) + " |", "|---" + "|---:" * len(runs) + "|"]
    first = next(iter(runs.values()))
    for row in ("minilm", "model"):
        for engine in first[row]:
            cells = [f"{names[row]} {engine}"]
            for run in runs.values():
                m = run[row][engine]
                cells.append(
                    f"{m['texts_per_s']:,.0f} ({m['ratio_vs_minilm_torch']:.2f}×, "
                    f"{m['ratio_vs_sentence_transformers']:.2f}×)"
                )
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def accuracy(index: TermIndex, runtimes: list[Runtime]) -> dict[str, Any]:
    """acc@1 per dataset and query runtime on ``index``, and agreement with torch fp32."""
    torch.set_num_threads(1)
    results: dict[str, Any] = {}
    for name, path in DATASETS.items():
        if not path.exists():
            continue
        mentions = read_mentions(path)
        texts = sorted({m.text for m in mentions if m.text.strip()})
        evaluator = NormalizationEvaluator(mentions, (1,))
        reference_vectors: np.ndarray | None = None
        reference_top: np.ndarray | None = None
        per: dict[str, Any] = {"mentions": len(mentions)}
        for runtime in [Runtime.TORCH, *[r for r in runtimes if r is not Runtime.TORCH]]:
            encoder = TermEncoder.load(device="cpu", runtime=runtime, threads=1)
            encoder.query_cache = None  # measure the runtime, not the cache
            vectors = encoder.encode(texts)
            top = index.search_terms(vectors, 1).ids[:, 0]
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
                "top1_term_agreement_vs_fp32": float(np.mean(top == reference_top)),
            }
            log(f"{name} {runtime.value}: {per[runtime.value]}")
        results[name] = per
    return results


class _TimedPart:
    """Wraps a search part and adds the seconds spent in its backend search."""

    def __init__(self, part: Any, clock: list[float]) -> None:
        self.part = part
        self.clock = clock

    def __getattr__(self, name: str) -> Any:
        return getattr(self.part, name)

    def __len__(self) -> int:
        return len(self.part)

    def search(self, queries: np.ndarray, k: int) -> Any:
        start = time.perf_counter()
        try:
            return self.part.search(queries, k)
        finally:
            self.clock[0] += time.perf_counter() - start


def latency(index: TermIndex, queries: list[str], runtimes: list[Runtime]) -> dict[str, Any]:
    """p50/p99 ms of one-query O-T normalize per runtime (one thread), and of its spans."""
    torch.set_num_threads(1)
    out: dict[str, Any] = {}
    for runtime in runtimes:
        encoder = TermEncoder.load(device="cpu", runtime=runtime, threads=1)
        matcher = SpaceMatcher(SearchSpace(index, encoder), SearchConfig(SearchMode.TERM.strategy))
        matcher.normalize("warm up", 5)
        matcher.normalize("warm up again", 5)  # the second single query builds the pre-scan
        module = matcher.config.strategy.first
        clock = [0.0]
        matcher._parts[module] = [_TimedPart(p, clock) for p in matcher._module_parts(module)]
        forward = encoder._forward
        encode_clock = [0.0]

        def timed_forward(
            inputs: dict[str, np.ndarray], f: Any = forward, spent: list[float] = encode_clock
        ) -> np.ndarray:
            start = time.perf_counter()
            try:
                return f(inputs)  # type: ignore[no-any-return]
            finally:
                spent[0] += time.perf_counter() - start

        encoder._forward = timed_forward
        spans: dict[str, list[float]] = {"total": [], "forward": [], "search": [], "rest": []}
        for q in queries:
            clock[0] = encode_clock[0] = 0.0
            start = time.perf_counter()
            matcher.normalize(q, 5)
            total = time.perf_counter() - start
            spans["total"].append(1000 * total)
            spans["forward"].append(1000 * encode_clock[0])
            spans["search"].append(1000 * clock[0])
            spans["rest"].append(1000 * (total - encode_clock[0] - clock[0]))
        out[runtime.value] = {
            f"{span}_{stat}_ms": percentile(values, q)
            for span, values in spans.items()
            for stat, q in (("p50", 50), ("p99", 99))
        }
        log(f"latency {runtime.value}: {out[runtime.value]}")
    return out


def _cli(args: list[str], src: Path | None, env: dict[str, str] | None = None) -> float:
    """Wall seconds of ``termnorm ARGS`` in a fresh process (``src``: another checkout)."""
    environ = {**os.environ, **(env or {})}
    if src is not None:
        environ["PYTHONPATH"] = str(src)
    code = "import sys; from termnorm.cli.main import main; sys.argv[0] = 'termnorm'; main()"
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", code, *args],
        env=environ,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return time.perf_counter() - start


def build(
    kg: Path,
    runtimes: list[Runtime],
    baseline: Path | None,
    work: Path,
    threads: int | None = None,
) -> dict[str, Any]:
    """Wall seconds of ``index build`` of ``kg`` per runtime (and with the baseline code),
    and acc@1 on each index built here. ``threads``: every build gets that many threads
    (``--threads`` here; ``OMP_NUM_THREADS`` for the baseline, whose torch reads it); default:
    each runtime's own choice."""
    out: dict[str, Any] = {"kg": str(kg), "threads": threads or "default"}
    extra = [] if threads is None else ["--threads", str(threads)]
    if baseline is not None:
        env = None if threads is None else {"OMP_NUM_THREADS": str(threads)}
        seconds = _cli(
            ["index", "build", "--kg", str(kg), "--out", str(work / "baseline")], baseline, env
        )
        out["baseline_torch_s"] = seconds
        log(f"build baseline torch: {seconds:.0f}s")
    for runtime in runtimes:
        folder = work / runtime.value
        args = ["index", "build", "--kg", str(kg), "--out", str(folder), "--runtime"]
        seconds = _cli([*args, runtime.value, *extra], None)
        entry: dict[str, Any] = {"seconds": seconds}
        if "baseline_torch_s" in out:
            entry["speedup_vs_baseline"] = out["baseline_torch_s"] / seconds
        log(f"build {runtime.value}: {seconds:.0f}s")
        entry["accuracy"] = accuracy(TermIndex.load(folder), [runtime])
        out[runtime.value] = entry
    return out


def first_run(baseline: Path | None) -> dict[str, Any]:
    """Wall seconds of a first ``termnorm normalize`` (it builds the default HPO index)."""
    out: dict[str, Any] = {}
    for name, src in (("baseline", baseline), ("this", None)):
        if name == "baseline" and src is None:
            continue
        with tempfile.TemporaryDirectory() as cache:
            seconds = _cli(["normalize", "short stature"], src, {"TERMNORM_CACHE": cache})
        out[f"{name}_s"] = seconds
        log(f"first normalize ({name}): {seconds:.0f}s")
    if "baseline_s" in out:
        out["speedup"] = out["baseline_s"] / out["this_s"]
    return out


def build_parser() -> argparse.ArgumentParser:
    """The command line; paths default to the checkout's working folders."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--terms-file", type=Path, default=ROOT / "kg" / "medic" / "terms.parquet")
    parser.add_argument("--n-terms", type=int, default=5000)
    parser.add_argument(
        "--model",
        type=Path,
        default=None,
        help="Another model folder (e.g. an imported e5) timed on --runtimes beside MiniLM.",
    )
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--index", type=Path, default=ROOT / "idx" / "medic")
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--runtimes", nargs="+", default=["torch", "onnx", "onnx-int8"])
    parser.add_argument("--build-kg", type=Path, default=ROOT / "kg" / "medic")
    parser.add_argument("--build-runtimes", nargs="+", default=["onnx-int8"])
    parser.add_argument(
        "--build-threads", type=int, default=None, help="Threads of every build (default: own)."
    )
    parser.add_argument("--baseline-src", type=Path, default=None)
    parser.add_argument("--work", type=Path, default=None, help="Folder for built indexes.")
    parser.add_argument("--skip", nargs="*", default=[], choices=SECTIONS)
    parser.add_argument("--json", action="store_true", help="Print the results as JSON.")
    return parser


def main() -> None:
    args = build_parser().parse_args()
    runtimes = [Runtime(r) for r in args.runtimes]
    report: dict[str, Any] = {"n_terms": args.n_terms, "runtimes": args.runtimes}
    if "throughput" not in args.skip:
        texts = sample_terms(args.terms_file, args.n_terms)
        report["throughput"] = {
            str(t): throughput(texts, runtimes, t, args.model) for t in args.threads
        }
        log(throughput_table(report["throughput"], args.model))
    # the index only for the sections that search it (a throughput run needs none)
    index = None if {"accuracy", "latency"} <= set(args.skip) else TermIndex.load(args.index)
    if index is not None and "accuracy" not in args.skip:
        report["accuracy"] = accuracy(index, runtimes)
    if index is not None and "latency" not in args.skip:
        queries = sorted(
            {m.text for path in DATASETS.values() for m in read_mentions(path) if m.text.strip()}
        )
        queries = random.Random(0).sample(queries, min(args.queries, len(queries)))
        report["latency_1_thread"] = latency(index, queries, runtimes)
        report["latency_1_thread"]["queries"] = len(queries)
    if "build" not in args.skip:
        with tempfile.TemporaryDirectory(dir=args.work) as work:
            report["build"] = build(
                args.build_kg,
                [Runtime(r) for r in args.build_runtimes],
                args.baseline_src,
                Path(work),
                args.build_threads,
            )
    if "first_run" not in args.skip:
        report["first_run"] = first_run(args.baseline_src)
    print(json.dumps(report, indent=2) if args.json else report)


if __name__ == "__main__":
    main()
