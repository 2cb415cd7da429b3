"""Time and peak memory of ``kg build --format omop`` versus download size, on a synthetic
Athena download.

Writes CONCEPT, CONCEPT_SYNONYM and CONCEPT_RELATIONSHIP tab-separated with a header (as
Athena ships them) for N concepts: SNOMED (45 %), LOINC (15 %), RxNorm (10 %) and UCUM (5 %)
standard concepts and ICD10CM non-standard ones (25 %), 3 % of all deprecated; ~0.5
English synonyms per concept; ~7 relationship rows per concept (``Is a`` + ``Subsumes`` to a
standard parent, ``Maps to`` + ``Mapped from`` from each ICD10CM concept to a SNOMED one,
standard concepts mapping to themselves, and other types), 5 % of them to concept IDs that
are not in the download. Each size is built and measured in a fresh process by
``vocab_load.py`` (time, peak RSS, RSS after the imports).

Usage: python benchmarks/omop_load.py [--sizes 100000 1000000] [--keep DIR]
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

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


def main() -> None:
    """``vocab_load.py --formats omop ...``: the same table as the other loaders'."""
    import vocab_load

    vocab_load.main(["--formats", "omop", *sys.argv[1:]])


if __name__ == "__main__":
    main()
