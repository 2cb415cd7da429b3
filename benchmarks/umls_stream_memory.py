"""Peak memory of the streaming UMLS build versus input size, on synthetic RRF files.

Writes a synthetic Metathesaurus (MRCONSO/MRREL/MRSTY in the real layouts, sorted by CUI,
~3.3 MRCONSO rows per CUI and ~6 MRREL rows per MRCONSO row, as in the full release), builds
it with ``build_kg_to_dir`` in a fresh process per size, and prints time and peak RSS.
Streaming means RSS grows only with the number of *CUIs* (the kept-CUI set and the MRSTY
map, ~200 bytes each), not with the number of rows.

Usage: python benchmarks/umls_stream_memory.py [--sizes 50000 200000] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROWS_PER_CUI = 3.3
REL_PER_CONSO = 6
WORDS = [
    "acute",
    "chronic",
    "heart",
    "lung",
    "renal",
    "pain",
    "fever",
    "infection",
    "syndrome",
    "disease",
    "tumor",
]


def write_meta(folder: Path, conso_rows: int, seed: int = 0) -> int:
    """Write synthetic MRCONSO/MRREL/MRSTY into ``folder``; return the number of CUIs."""
    rng = random.Random(seed)
    n_cuis = max(1, int(conso_rows / ROWS_PER_CUI))
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "MRCONSO.RRF", "w") as conso, open(folder / "MRSTY.RRF", "w") as sty:
        row = 0
        for i in range(n_cuis):
            cui = f"C{i:07d}"
            sty.write(f"{cui}|T047|B2.2.1.2.1|Disease or Syndrome|AT{i:08d}|256|\n")
            for j in range(max(1, round(rng.gauss(ROWS_PER_CUI, 1)))):
                row += 1
                lat = "ENG" if rng.random() < 0.7 else "SPA"
                ts, ispref = ("P", "Y") if j == 0 else ("S", "N")
                text = " ".join(rng.choices(WORDS, k=3)) + f" {i}"
                conso.write(
                    f"{cui}|{lat}|{ts}|L{i:07d}|PF|S{row:07d}|{ispref}|A{row:08d}|||"
                    f"|MSH|PT|D{i:06d}|{text}|0|N|256|\n"
                )
    with open(folder / "MRREL.RRF", "w") as rel:
        per_cui = REL_PER_CONSO * ROWS_PER_CUI
        for i in range(n_cuis):
            for k in range(max(0, round(rng.gauss(per_cui, 3)))):
                j = rng.randrange(n_cuis)
                rela = rng.choice(["", "isa", "has_finding_site"])
                rel.write(
                    f"C{i:07d}|A1|SCUI|{rng.choice(['RO', 'CHD', 'PAR', 'SIB'])}|C{j:07d}|A2|SCUI|"
                    f"{rela}|R{i:07d}{k:03d}||MSH|MSH|0|N|N||\n"
                )
    return n_cuis


def _child(meta: str, out: str) -> None:
    """Build in this process and print a JSON line with time and peak RSS."""
    from termnorm.kg.build import KGFormat, SourceSpec, build_kg_to_dir

    start = time.perf_counter()
    card, [report] = build_kg_to_dir([SourceSpec(KGFormat.UMLS, Path(meta))], out)
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result = {
        "seconds": time.perf_counter() - start,
        "peak_rss_mb": peak_kb / 1024,
        "mrconso_rows": report.read["MRCONSO rows"],
        "mrrel_rows": report.read["MRREL rows"],
        "counts": card["counts"],
    }
    print(json.dumps(result))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[50_000, 200_000])
    parser.add_argument("--keep", type=Path, help="Write the synthetic data here (kept).")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(*args.child)
        return
    print(f"{'MRCONSO':>10} {'MRREL':>10} {'CUIs':>9} {'seconds':>8} {'peak RSS MB':>12}")
    for size in args.sizes:
        with tempfile.TemporaryDirectory() as tmp:
            root = args.keep or Path(tmp)
            meta = root / f"meta_{size}"
            n_cuis = write_meta(meta, size)
            proc = subprocess.run(
                [sys.executable, __file__, "--child", str(meta), str(root / f"kg_{size}")],
                check=True,
                capture_output=True,
                text=True,
            )
            r = json.loads(proc.stdout.strip().splitlines()[-1])
            print(
                f"{r['mrconso_rows']:>10,} {r['mrrel_rows']:>10,} {n_cuis:>9,} "
                f"{r['seconds']:>8.1f} {r['peak_rss_mb']:>12.0f}"
            )


if __name__ == "__main__":
    main()
