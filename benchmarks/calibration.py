"""Calibration of the top candidate's score: ECE (10 bins) and a reliability plot.

Reads ``termnorm eval normalize --predictions`` files (simple mentions that got an answer):
the confidence of a mention is its top candidate's ``score`` and the outcome whether that
candidate is correct. With ``--combiner`` the score is the combiner's probability; a
recall-only file's score is a cosine, shown for comparison (it is not a probability).
Also prints, per threshold t, the share of mentions scored ≥ t and their precision
("auto-accept above t").

Usage (from the repo root; matplotlib is in the ``lab`` extra)::

    python benchmarks/calibration.py NAME=PRED.jsonl [NAME=PRED.jsonl ...] --png reports/calibration.png
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from termnorm.evaluation.predictions import read_records
from termnorm.search.stages.combiner.calibration import expected_calibration_error, reliability_bins

THRESHOLDS = (0.5, 0.7, 0.8, 0.9, 0.95)


def top_scores(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """(confidence, correct) of the top candidate of every answered simple mention."""
    conf, ok = [], []
    for record in read_records(path):
        if record["kind"] != "simple" or not record["predictions"]:
            continue
        top = record["predictions"][0]
        conf.append(float(np.clip(top["score"], 0.0, 1.0)))
        ok.append(bool(top["correct"]))
    return np.array(conf), np.array(ok)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", help="NAME=PREDICTIONS.jsonl")
    parser.add_argument("--png", type=Path, help="Reliability plot to write.")
    parser.add_argument("--json", dest="json_out", action="store_true", help="Print JSON.")
    args = parser.parse_args(argv)
    runs = {}
    for item in args.files:
        name, _, path = item.partition("=")
        conf, ok = top_scores(Path(path))
        accepted = {
            f"{t:g}": {
                "share": float(np.mean(conf >= t)),
                "precision": float(np.mean(ok[conf >= t])) if np.any(conf >= t) else None,
            }
            for t in THRESHOLDS
        }
        runs[name] = {
            "n": len(conf),
            "acc@1": float(np.mean(ok)),
            "ece": expected_calibration_error(conf, ok),
            "accepted": accepted,
            "bins": [b.__dict__ for b in reliability_bins(conf, ok)],
        }
    if args.json_out:
        print(json.dumps(runs, indent=2))
    else:
        for name, r in runs.items():
            acc = ", ".join(
                f">={t}: {100 * a['share']:.1f} % at {100 * (a['precision'] or 0):.1f} %"
                for t, a in r["accepted"].items()
            )
            print(f"{name}: n {r['n']}, acc@1 {100 * r['acc@1']:.1f}, ECE {r['ece']:.3f}; {acc}")
    if args.png is not None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(5, 5))
        ax.plot([0, 1], [0, 1], color="grey", linestyle=":", label="perfect calibration")
        for name, r in runs.items():
            xs = [b["confidence"] for b in r["bins"]]
            ys = [b["accuracy"] for b in r["bins"]]
            ax.plot(xs, ys, marker="o", label=f"{name} (ECE {r['ece']:.3f})")
        ax.set_xlabel("top candidate's score (mean in bin)")
        ax.set_ylabel("share correct in bin")
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.legend(loc="upper left", fontsize=8)
        ax.set_title("Reliability, 10 bins (simple mentions)")
        args.png.parent.mkdir(parents=True, exist_ok=True)
        fig.tight_layout()
        fig.savefig(args.png, dpi=120)
    return 0


if __name__ == "__main__":
    sys.exit(main())
