"""Time and peak memory of ``kg build --format snomed`` and ``--format loinc`` on synthetic
releases of N concepts, each build in a fresh process (:func:`measure`, which
``omop_load.py`` uses too).

* **snomed**: an RF2 Snapshot (the release layout, tab-separated, CRLF): N concepts (3 %
  inactive, 2 % with an older version row), ~2.5 descriptions per concept (FSN, US
  preferred synonym, a GB spelling for 30 %, another synonym for 20 %; 2 % inactive), ~3
  relationships per concept (an ``Is a`` to an earlier concept, two attribute relationships
  of four types; 3 % to absent concepts, 2 % inactive) and the US and GB language refset rows
  of every synonym and FSN.
* **loinc**: a ``Loinc.csv`` of N rows in the 2.7x column layout (41 quoted columns, ~10
  RELATEDNAMES2 entries a row; 90 % ACTIVE, 4 % TRIAL, 3 % DISCOURAGED, 3 % DEPRECATED).

Each build runs ``build_kg_to_dir`` in a child process that prints the time, the peak RSS
(``ru_maxrss``) and the RSS after the imports.

``--formats omop`` measures the synthetic Athena download of ``omop_load.py``.

Usage: python benchmarks/vocab_load.py [--formats snomed loinc omop] [--sizes 100000] [--keep DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

WORDS = ("iron", "deficiency", "anemia", "chronic", "renal", "failure", "acute", "structure")
TYPES = {363698007: "Finding site", 116676008: "Associated morphology", 246075003: "Causative agent",
         370135005: "Pathological process"}  # fmt: skip
IS_A, FSN, SYNONYM = 116680003, 900000000000003001, 900000000000013009
US, GB = 900000000000509007, 900000000000508004
PREFERRED, ACCEPTABLE = 900000000000548007, 900000000000549004
CORE = 900000000000207008
LOINC_COLUMNS = [
    "LOINC_NUM",
    "COMPONENT",
    "PROPERTY",
    "TIME_ASPCT",
    "SYSTEM",
    "SCALE_TYP",
    "METHOD_TYP",
    "CLASS",
    "VersionLastChanged",
    "CHNG_TYPE",
    "DefinitionDescription",
    "STATUS",
    "CONSUMER_NAME",
    "CLASSTYPE",
    "FORMULA",
    "EXMPL_ANSWERS",
    "SURVEY_QUEST_TEXT",
    "SURVEY_QUEST_SRC",
    "UNITSREQUIRED",
    "RELATEDNAMES2",
    "SHORTNAME",
    "ORDER_OBS",
    "HL7_FIELD_SUBFIELD_ID",
    "EXTERNAL_COPYRIGHT_NOTICE",
    "EXAMPLE_UNITS",
    "LONG_COMMON_NAME",
    "EXAMPLE_UCUM_UNITS",
    "STATUS_REASON",
    "STATUS_TEXT",
    "CHANGE_REASON_PUBLIC",
    "COMMON_TEST_RANK",
    "COMMON_ORDER_RANK",
    "COMMON_SI_TEST_RANK",
    "HL7_ATTACHMENT_STRUCTURE",
    "EXTERNAL_COPYRIGHT_LINK",
    "PanelType",
    "AskAtOrderEntry",
    "AssociatedObservations",
    "VersionFirstReleased",
    "ValidHL7AttachmentRequest",
    "DisplayName",
]


class _Rf2Writer:
    """The four Snapshot files of a synthetic release, written row by row."""

    def __init__(self, folder: Path, rng: random.Random, stack: contextlib.ExitStack) -> None:
        terminology = folder / "Snapshot" / "Terminology"
        language = folder / "Snapshot" / "Refset" / "Language"
        terminology.mkdir(parents=True, exist_ok=True)
        language.mkdir(parents=True, exist_ok=True)
        self.rng = rng
        self.rows = {"concepts": 0, "descriptions": 0, "relationships": 0, "refset": 0}
        self.files = {
            "concepts": (terminology / "sct2_Concept_Snapshot_INT_20240101.txt",
                         "id effectiveTime active moduleId definitionStatusId"),
            "descriptions": (terminology / "sct2_Description_Snapshot-en_INT_20240101.txt",
                             "id effectiveTime active moduleId conceptId languageCode typeId "
                             "term caseSignificanceId"),
            "relationships": (terminology / "sct2_Relationship_Snapshot_INT_20240101.txt",
                              "id effectiveTime active moduleId sourceId destinationId "
                              "relationshipGroup typeId characteristicTypeId modifierId"),
            "refset": (language / "der2_cRefset_LanguageSnapshot-en_INT_20240101.txt",
                       "id effectiveTime active moduleId refsetId referencedComponentId "
                       "acceptabilityId"),
        }  # fmt: skip
        self.handles = {
            name: stack.enter_context(open(path, "w", newline=""))  # noqa: SIM115 (closed by stack)
            for name, (path, _) in self.files.items()
        }
        for name, (_, header) in self.files.items():
            self.write(name, *header.split())
        self.rows = dict.fromkeys(self.rows, 0)
        self.next_id = 1_000_000

    def write(self, table: str, *values: object) -> None:
        self.handles[table].write("\t".join(str(v) for v in values) + "\r\n")
        self.rows[table] += 1

    def new_id(self) -> int:
        self.next_id += 1
        return self.next_id

    def description(self, concept: int, kind: int, term: str, us: int, gb: int) -> None:
        """A description and its US / GB refset rows (0: not a member)."""
        did, active = self.new_id(), int(self.rng.random() >= 0.02)
        self.write("descriptions", did, 20020131, active, CORE, concept, "en", kind, term, 0)
        for refset, acceptability in ((US, us), (GB, gb)):
            if acceptability:
                member = uuid.UUID(int=self.rng.getrandbits(128), version=4)
                self.write("refset", member, 20020131, 1, CORE, refset, did, acceptability)

    def concept(self, cid: int, name: str, tag: str) -> None:
        """A concept row (3 % inactive, 2 % with an older row) and its descriptions."""
        if self.rng.random() < 0.02:
            self.write("concepts", cid, 20020131, 1, CORE, 900000000000074008)
        active = int(self.rng.random() >= 0.03)
        self.write("concepts", cid, 20240101, active, CORE, 900000000000073002)
        self.description(cid, FSN, f"{name} ({tag})", PREFERRED, PREFERRED)
        british = self.rng.random() < 0.3
        self.description(cid, SYNONYM, name, PREFERRED, ACCEPTABLE if british else PREFERRED)
        if british:
            self.description(
                cid, SYNONYM, name.replace("anemia", "anaemia") + " (GB)", 0, PREFERRED
            )
        if self.rng.random() < 0.2:
            self.description(cid, SYNONYM, f"{name} NOS", ACCEPTABLE, ACCEPTABLE)

    def relationship(self, source: int, destination: int, kind: int, group: int) -> None:
        if self.rng.random() < 0.03:
            destination = 9_000_000_000 + self.rng.randrange(10**6)
        active = int(self.rng.random() >= 0.02)
        self.write("relationships", self.new_id(), 20020131, active, CORE, source, destination,
                   group, kind, 900000000000011006, 900000000000451002)  # fmt: skip


def write_rf2(folder: Path, n: int, seed: int = 0) -> dict[str, int]:
    """Write a synthetic RF2 Snapshot of ``n`` concepts; return its row counts."""
    rng = random.Random(seed)
    ids = [100_000_000 + i for i in range(n)]
    with contextlib.ExitStack() as stack:
        writer = _Rf2Writer(folder, rng, stack)
        for kind, name in [(IS_A, "Is a"), *TYPES.items()]:
            writer.concept(kind, name, "attribute")
        for i, cid in enumerate(ids):
            writer.concept(cid, " ".join(rng.choices(WORDS, k=4)) + f" {i}", "disorder")
            if i:
                writer.relationship(cid, ids[rng.randrange(i)], IS_A, 0)
            for group in (1, 2):
                writer.relationship(cid, ids[rng.randrange(n)], rng.choice(list(TYPES)), group)
    return writer.rows


def write_loinc(path: Path, n: int, seed: int = 0) -> dict[str, int]:
    """Write a synthetic ``Loinc.csv`` of ``n`` rows; return its row count."""
    rng = random.Random(seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    statuses = rng.choices(["ACTIVE", "TRIAL", "DISCOURAGED", "DEPRECATED"], [90, 4, 3, 3], k=n)
    with open(path, "w", encoding="utf-8", newline="") as handle:
        out = csv.writer(handle, quoting=csv.QUOTE_ALL, lineterminator="\r\n")
        out.writerow(LOINC_COLUMNS)
        for i in range(n):
            component = " ".join(rng.choices(WORDS, k=2)).capitalize() + f" {i}"
            related = "; ".join([f"{component[:4]}{i}", *rng.choices(WORDS, k=9)])
            row = dict.fromkeys(LOINC_COLUMNS, "")
            row |= {
                "LOINC_NUM": f"{10_000 + i}-{i % 10}", "COMPONENT": component,
                "PROPERTY": "MCnc", "TIME_ASPCT": "Pt", "SYSTEM": "Ser/Plas", "SCALE_TYP": "Qn",
                "METHOD_TYP": rng.choice(["", "Automated count"]), "CLASS": "CHEM",
                "CLASSTYPE": "1", "STATUS": statuses[i], "SHORTNAME": f"{component} SerPl-mCnc",
                "LONG_COMMON_NAME": f"{component} [Mass/volume] in Serum or Plasma",
                "CONSUMER_NAME": f"{component}, Serum or Plasma", "RELATEDNAMES2": related,
                "DisplayName": f"{component} [Mass/Vol]",
            }  # fmt: skip
            out.writerow(row.values())
    return {"rows": n}


ATHENA_VOCABULARIES = [  # vocabulary, domain, class, standard, share
    ("SNOMED", "Condition", "Clinical Finding", "S", 0.45),
    ("LOINC", "Measurement", "Lab Test", "S", 0.15),
    ("RxNorm", "Drug", "Clinical Drug", "S", 0.10),
    ("UCUM", "Unit", "Unit", "S", 0.05),
    ("ICD10CM", "Condition", "4-char billing code", "", 0.25),
]
ATHENA_OTHER_TYPES = [
    "Has finding site",
    "Finding site of",
    "Has asso morph",
    "RxNorm has dose form",
]
ATHENA_WORDS = ("type", "diabetes", "mellitus", "hemoglobin", "glucose", "serum", "oral", "acute")
ATHENA_ABSENT = 2_000_000_000  # concept IDs from here on are not in the download


def write_athena(folder: Path, n: int, seed: int = 0) -> dict[str, int]:
    """Write the synthetic Athena download of ``omop_load.py`` (CONCEPT, CONCEPT_SYNONYM and
    CONCEPT_RELATIONSHIP, as its docstring describes) into ``folder``; return its row counts."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    kinds = rng.choices(range(len(ATHENA_VOCABULARIES)), [v[4] for v in ATHENA_VOCABULARIES], k=n)
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
                two = ATHENA_ABSENT + rng.randrange(10**6)
            relationship.write(f"{one}\t{two}\t{kind}\t19700101\t20991231\t\n")
            counts["relationships"] += 1

        for i, cid in enumerate(ids):
            vocabulary, domain, klass, standard, _ = ATHENA_VOCABULARIES[kinds[i]]
            name = " ".join(rng.choices(ATHENA_WORDS, k=4)) + f" {i}"
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
                relate(cid, ids[rng.randrange(n)], rng.choice(ATHENA_OTHER_TYPES))
    return counts


def _child(fmt: str, source: str, out: str, options: str = "{}") -> None:
    """Build in this process (loader ``options`` as JSON) and print a JSON line with time and
    peak RSS."""
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
        "counts": card["counts"],
    }
    print(json.dumps(result))


def measure(
    fmt: str, source: Path, out: Path, options: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Build ``source`` (format ``fmt``, loader ``options``) into ``out`` in a fresh process:
    its JSON result."""
    script = Path(__file__).resolve()
    proc = subprocess.run(
        [
            sys.executable,
            str(script),
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
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


WRITERS = {  # format: (writer of N concepts, the source's path under the folder)
    "snomed": (write_rf2, "rf2"),
    "loinc": (write_loinc, "LoincTable/Loinc.csv"),
    "omop": (write_athena, "athena"),
}


def main(argv: list[str] | None = None) -> None:
    """Write each format's synthetic release per size, build it in a fresh process, print a
    table row (``argv``: the command line, default ``sys.argv[1:]``)."""
    if sys.argv[1:2] == ["--child"]:  # measure()'s fresh process: FORMAT SOURCE OUT OPTIONS
        _child(*sys.argv[2:6])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--formats", nargs="+", choices=sorted(WRITERS), default=["snomed", "loinc"]
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000])
    parser.add_argument("--keep", type=Path, help="Write the synthetic data here (kept).")
    args = parser.parse_args(argv)
    print(
        f"{'format':>7} {'concepts':>9} {'source rows':>11} {'KG concepts':>11} {'KG terms':>9} "
        f"{'relations':>9} {'write s':>8} {'load s':>7} {'peak RSS MB':>11} {'after imports':>13}"
    )
    for fmt in args.formats:
        for size in args.sizes:
            with tempfile.TemporaryDirectory() as tmp:
                root = args.keep or Path(tmp)
                write, name = WRITERS[fmt]
                source = root / f"{fmt}_{size}" / name
                start = time.perf_counter()
                rows = write(source, size)
                written = time.perf_counter() - start
                r = measure(fmt, source, root / f"kg_{fmt}_{size}")
                c = r["counts"]
                print(
                    f"{fmt:>7} {size:>9,} {sum(rows.values()):>11,} {c['concepts']:>11,} "
                    f"{c['terms']:>9,} {c['relations']:>9,} {written:>8.1f} {r['seconds']:>7.1f} "
                    f"{r['peak_rss_mb']:>11.0f} {r['rss_after_imports_mb']:>13.0f}"
                )


if __name__ == "__main__":
    main()
