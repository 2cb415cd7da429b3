"""Time and peak memory of ``kg build --format omop`` versus download size, on a synthetic
Athena download.

Writes CONCEPT, CONCEPT_SYNONYM and CONCEPT_RELATIONSHIP tab-separated with a header (as
Athena ships them) for N concepts: SNOMED (45 %), LOINC (15 %), RxNorm (10 %) and UCUM (5 %)
standard concepts and ICD10CM non-standard ones (25 %), 3 % of all deprecated; ~0.5
English synonyms per concept; ~7 relationship rows per concept (``Is a`` + ``Subsumes`` to a
standard parent, ``Maps to`` + ``Mapped from`` from each ICD10CM concept to a SNOMED one,
standard concepts mapping to themselves, and other types), 5 % of them to concept IDs that
are not in the download. Each size is built with ``build_kg_to_dir`` in a fresh process,
which prints the time and the peak RSS (``ru_maxrss``), and the RSS after the imports
(:func:`build_in_fresh_process`, which ``benchmarks/fhir_load.py`` reuses).

Usage: python benchmarks/omop_load.py [--sizes 100000 1000000] [--keep DIR]
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
from typing import Any

VOCABULARIES = [  # vocabulary, domain, class, standard, share
    ("SNOMED", "Condition", "Clinical Finding", "S", 0.45),
    ("LOINC", "Measurement", "Lab Test", "S", 0.15),
    ("RxNorm", "Drug", "Clinical Drug", "S", 0.10),
    ("UCUM", "Unit", "Unit", "S", 0.05),
    ("ICD10CM", "Condition", "4-char billing code", "", 0.25),
]
OTHER_TYPES = ["Has finding site", "Finding site of", "Has asso morph", "RxNorm has dose form"]
WORDS = ("type", "diabetes", "mellitus", "hemoglobin", "glucose", "serum", "oral", "acute")
ABSENT = 2_000_000_000  # concept IDs from here on are not in the download


def write_athena(folder: Path, n: int, seed: int = 0) -> dict[str, int]:
    """Write the synthetic download into ``folder``; return its row counts."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    kinds = rng.choices(range(len(VOCABULARIES)), [v[4] for v in VOCABULARIES], k=n)
    ids = [1_000 + i for i in range(n)]
    snomed = [ids[i] for i in range(n) if kinds[i] == 0]
    counts = {"concepts": n, "synonyms": 0, "relationships": 0}
    header = "concept_id\tconcept_name\tdomain_id\tvocabulary_id\tconcept_class_id\t"
    header += "standard_concept\tconcept_code\tvalid_start_date\tvalid_end_date\tinvalid_reason\n"
    with (
        open(folder / "CONCEPT.csv", "w") as concept,
        open(folder / "CONCEPT_SYNONYM.csv", "w") as synonym,
        open(folder / "CONCEPT_RELATIONSHIP.csv", "w") as relationship,
    ):
        concept.write(header)
        synonym.write("concept_id\tconcept_synonym_name\tlanguage_concept_id\n")
        relationship.write(
            "concept_id_1\tconcept_id_2\trelationship_id\tvalid_start_date\tvalid_end_date\t"
            "invalid_reason\n"
        )

        def relate(one: int, two: int, kind: str) -> None:
            if rng.random() < 0.05:
                two = ABSENT + rng.randrange(10**6)
            relationship.write(f"{one}\t{two}\t{kind}\t19700101\t20991231\t\n")
            counts["relationships"] += 1

        for i, cid in enumerate(ids):
            vocabulary, domain, klass, standard, _ = VOCABULARIES[kinds[i]]
            name = " ".join(rng.choices(WORDS, k=4)) + f" {i}"
            deprecated = rng.random() < 0.03
            end, reason = ("20150101", "D") if deprecated else ("20991231", "")
            concept.write(
                f"{cid}\t{name}\t{domain}\t{vocabulary}\t{klass}\t{standard}\tC{i}\t19700101"
                f"\t{end}\t{reason}\n"
            )
            if rng.random() < 0.5:
                synonym.write(f"{cid}\t{name} (synonym)\t4180186\n")
                counts["synonyms"] += 1
            if standard:
                relate(cid, cid, "Maps to")
                relate(cid, cid, "Mapped from")
                parent = ids[rng.randrange(max(1, i))] if i else cid
                if parent != cid:
                    relate(cid, parent, "Is a")
                    relate(parent, cid, "Subsumes")
            elif snomed:
                target = rng.choice(snomed)
                relate(cid, target, "Maps to")
                relate(target, cid, "Mapped from")
            for _ in range(rng.choice([2, 3, 4])):
                relate(cid, ids[rng.randrange(n)], rng.choice(OTHER_TYPES))
    return counts


def measure_build(fmt: str, source: str, out: str, options: str = "{}") -> None:
    """Build the KG of ``source`` (format ``fmt``, loader ``options`` as JSON) into ``out`` in
    this process and print a JSON line with the time, the peak RSS and the RSS after the
    imports."""
    from termnorm.kg.build import SourceSpec, build_kg_to_dir

    imported_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    card, [report] = build_kg_to_dir([SourceSpec(fmt, Path(source), json.loads(options))], out)
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result = {
        "seconds": time.perf_counter() - start,
        "peak_rss_mb": peak_kb / 1024,
        "rss_after_imports_mb": imported_kb / 1024,
        "read": dict(report.read),
        "dropped": dict(report.dropped),
        "counts": card["counts"],
    }
    print(json.dumps(result))


def build_in_fresh_process(
    fmt: str, source: Path, out: Path, options: dict[str, Any] | None = None
) -> dict[str, Any]:
    """:func:`measure_build` in a fresh Python process (so the peak RSS is this build's)."""
    proc = subprocess.run(
        [
            sys.executable,
            __file__,
            "--child",
            fmt,
            str(source),
            str(out),
            json.dumps(options or {}),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000])
    parser.add_argument("--keep", type=Path, help="Write the synthetic data here (kept).")
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        measure_build(*args.child)
        return
    print(
        f"{'concepts':>10} {'relationships':>13} {'KG concepts':>11} {'KG terms':>9} "
        f"{'is_a':>8} {'write s':>8} {'load s':>7} {'peak RSS MB':>11} {'after imports':>13}"
    )
    for size in args.sizes:
        with tempfile.TemporaryDirectory() as tmp:
            root = args.keep or Path(tmp)
            folder = root / f"athena_{size}"
            start = time.perf_counter()
            rows = write_athena(folder, size)
            written = time.perf_counter() - start
            r = build_in_fresh_process("omop", folder, root / f"kg_{size}")
            c = r["counts"]
            print(
                f"{rows['concepts']:>10,} {rows['relationships']:>13,} {c['concepts']:>11,} "
                f"{c['terms']:>9,} {c['relations']:>8,} {written:>8.1f} {r['seconds']:>7.1f} "
                f"{r['peak_rss_mb']:>11.0f} {r['rss_after_imports_mb']:>13.0f}"
            )


if __name__ == "__main__":
    main()
