"""Training throughput and peak memory of ``termnorm train`` settings (issue 3, item 3).

Each variant runs ``termnorm train`` in its own process for ``--steps`` steps (so peak RSS is
the variant's own), then this script reads the run's ``train_log.jsonl`` and prints one row
per variant: median terms/s over the logged steps after the first ``--skip`` (warm-up, the
first neighbour refresh), median s/step, peak RSS (MiB) and the speed ratio to the first
variant. Usage (from the repo root; scratch models go to a temporary folder)::

    python benchmarks/train_throughput.py --kg runs/kgs/medic_hpo --steps 60 --threads 2
    python benchmarks/train_throughput.py --kg KG --variant "fp32=--precision fp32" \\
        --variant "bf16=--precision bf16"

Default variants: the recommended recipe (bf16 autocast, frozen embeddings and lowest two
layers, max length 24), the same in fp32, without freezing, and at max length 32.
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DEFAULT_VARIANTS = {
    "recipe (bf16, frozen emb+2 layers, len 24)": "",
    "fp32": "--precision fp32",
    "no freezing": "--no-freeze-embeddings --freeze-layers 0",
    "max length 32": "--max-length 32",
}


def run_variant(kg: str, extra: str, steps: int, threads: int, out: Path) -> float:
    """Train one variant into ``out``; return its wall time in seconds."""
    cmd = [
        *(sys.executable, "-c", "from termnorm.cli.main import main; main()", "train"),
        *("--kg", kg, "--out", str(out), "--steps", str(steps), "--threads", str(threads)),
        *("--log-every", "5", "--checkpoint-every", str(10 * steps)),
        *shlex.split(extra),
    ]
    tick = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"variant failed ({' '.join(cmd)}):\n{done.stderr[-2000:]}")
    return time.perf_counter() - tick


def summarise(log: Path, skip: int) -> dict[str, float]:
    """Median terms/s and s/step over logged steps after ``skip``; the largest RSS seen."""
    records = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    timed = [r for r in records if "terms_per_s" in r and r["step"] > skip]
    if not timed:
        raise SystemExit(f"{log}: no logged steps after step {skip}; raise --steps")
    return {
        "terms_per_s": statistics.median(r["terms_per_s"] for r in timed),
        "s_per_step": statistics.median(r["s_per_step"] for r in timed),
        "peak_rss_mb": max(r.get("rss_mb", 0.0) for r in records),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kg", required=True, help="KG folder to train on")
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--skip", type=int, default=10, help="logged steps ignored at start")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument(
        "--variant",
        action="append",
        default=[],
        metavar="NAME=FLAGS",
        help="extra 'termnorm train' flags per variant (default: the four built-in ones)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args(argv)
    variants = dict(v.split("=", 1) for v in args.variant) if args.variant else DEFAULT_VARIANTS
    rows: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, (name, extra) in enumerate(variants.items()):
            out = Path(tmp) / f"v{i}"
            wall = run_variant(args.kg, extra, args.steps, args.threads, out)
            rows.append({"variant": name, "flags": extra, "wall_s": wall,
                         **summarise(out / "train_log.jsonl", args.skip)})  # fmt: skip
    base = float(rows[0]["terms_per_s"])  # type: ignore[arg-type]
    for row in rows:
        row["speed_ratio"] = float(row["terms_per_s"]) / base  # type: ignore[arg-type]
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print("| variant | flags | terms/s | s/step | peak RSS (MiB) | speed vs first | wall (s) |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r['variant']} | `{r['flags'] or '(defaults)'}` | {r['terms_per_s']:.0f} "
            f"| {r['s_per_step']:.2f} | {r['peak_rss_mb']:.0f} | {r['speed_ratio']:.2f}x "
            f"| {r['wall_s']:.0f} |"
        )


if __name__ == "__main__":
    main()
