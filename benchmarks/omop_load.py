"""Time and peak memory of ``kg build --format omop`` versus download size, on a synthetic
Athena download.

Writes CONCEPT, CONCEPT_SYNONYM and CONCEPT_RELATIONSHIP tab-separated with a header (as
Athena ships them) for N concepts: SNOMED (45 %), LOINC (15 %), RxNorm (10 %) and UCUM (5 %)
standard concepts and ICD10CM non-standard ones (25 %), 3 % of all deprecated; ~0.5
English synonyms per concept; ~7 relationship rows per concept (``Is a`` + ``Subsumes`` to a
standard parent, ``Maps to`` + ``Mapped from`` from each ICD10CM concept to a SNOMED one,
standard concepts mapping to themselves, and other types), 5 % of them to concept IDs that
are not in the download (``vocab_load.write_athena``). Each size is built and measured in a
fresh process by ``vocab_load.py`` (time, peak RSS, RSS after the imports).

Usage: python benchmarks/omop_load.py [--sizes 100000 1000000] [--keep DIR]
"""

from __future__ import annotations

import sys

from vocab_load import main

if __name__ == "__main__":  # vocab_load.py --formats omop ...: the other loaders' table
    main(["--formats", "omop", *sys.argv[1:]])
