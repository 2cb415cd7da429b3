"""Batch normalization rows/s: the local engine, and Ray with 1 and 2 workers, on one file.

    python benchmarks/batch_engines.py --index IDX --rows 100000 --work DIR
                                       [--engines local ray1 ray2] [--chunk-rows 4096] [--json]

The input (``DIR/mentions-ROWS.parquet``, built once, seeded) holds disease mention texts of
NCBI disease (train + devel) and BC5CDR (train + dev) and MEDIC terms, shuffled, repeated
only when ``--rows`` exceeds them. Each engine normalizes it with the index's O-T matcher
(k=1), torch with one thread per process (the local run sets it; Ray gives each actor one
CPU and OMP_NUM_THREADS=1). The figure is input rows ÷ wall time of the whole call: index
loading, and for Ray starting the local Ray and its actors, included. Every Ray output is
checked row for row against the local one (``DIR/out-local.parquet``, from this run or an
earlier one with ``--engines local``).
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import torch

from termnorm import api
from termnorm.mentions import read_mentions

BENCH = Path(__file__).resolve().parents[2] / "shared" / "benchmarks"
SOURCES = [
    ("ncbi_disease/NCBItrainset_corpus.txt", "pubtator"),
    ("ncbi_disease/NCBIdevelopset_corpus.txt", "pubtator"),
    ("bc5cdr_disease/train", "biosyn"),
    ("bc5cdr_disease/dev", "biosyn"),
]


def build_input(path: Path, rows: int, bench: Path, medic_terms: Path) -> Path:
    """The seeded input file of ``rows`` mention texts (see the module docstring)."""
    if path.is_file():
        return path
    texts: list[str] = []
    for name, fmt in SOURCES:
        texts += [m.text for m in read_mentions(bench / name, fmt)]
    texts += pq.read_table(medic_terms, columns=["term"]).column("term").to_pylist()
    random.Random(0).shuffle(texts)
    repeated = (texts * (rows // len(texts) + 1))[:rows]
    table = pa.table({"id": list(range(rows)), "mention": repeated})
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path, row_group_size=16384)
    return path


def run_engine(engine: str, src: Path, work: Path, index: Path, chunk_rows: int) -> dict[str, Any]:
    """Normalize ``src`` with ``engine`` (``local``, ``rayN``) and time the whole call."""
    out = work / (f"out-{engine}" + (".parquet" if engine == "local" else ""))
    if out.is_dir():
        shutil.rmtree(out)
    out.unlink(missing_ok=True)
    options: dict[str, Any] = {"index": index, "chunk_rows": chunk_rows, "show_progress": False}
    if engine.startswith("ray"):
        options |= {"engine": "ray", "workers": int(engine[3:])}
    start = time.perf_counter()
    report = api.normalize_file(src, out, **options)
    seconds = time.perf_counter() - start
    return {
        "engine": engine,
        "rows": report.rows,
        "seconds": round(seconds, 1),
        "rows_per_s": round(report.rows / seconds, 1),
        "errors": report.errors,
        "output": str(out),
    }


def read_output(path: Path) -> pa.Table:
    """A local output file, or a Ray output folder's parts in order."""
    if path.is_file():
        return pq.read_table(path)
    return pa.concat_tables([pq.read_table(p) for p in sorted(path.glob("part-*.parquet"))])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--engines", nargs="+", default=["local", "ray1", "ray2"])
    parser.add_argument("--chunk-rows", type=int, default=4096)
    parser.add_argument("--bench", type=Path, default=BENCH)
    parser.add_argument("--medic-terms", type=Path, default=None)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    card = json.loads((args.index / "index.json").read_text())
    terms = args.medic_terms or Path(card["kg"]["path"]) / "terms.parquet"
    src = build_input(args.work / f"mentions-{args.rows}.parquet", args.rows, args.bench, terms)
    results = []
    for engine in args.engines:
        result = run_engine(engine, src, args.work, args.index, args.chunk_rows)
        print(json.dumps(result), file=sys.stderr, flush=True)
        results.append(result)
    local = args.work / "out-local.parquet"  # this run's, or an earlier run's on the same file
    if local.is_file():
        reference = read_output(local)
        for result in results:
            result["same_as_local"] = read_output(Path(result["output"])).equals(reference)
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        for r in results:
            print(f"{r['engine']:>6}  {r['rows']} rows  {r['seconds']} s  {r['rows_per_s']} rows/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
