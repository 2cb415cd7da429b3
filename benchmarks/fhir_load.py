"""Time and peak memory of ``kg build --format fhir`` on a synthetic CodeSystem.

Writes one FHIR R4 CodeSystem JSON of N concepts (url ``http://snomed.info/sct``) in two
shapes: ``nested`` (each concept in its parent's ``concept`` list, a 10-ary tree, 5 to 6
levels deep for 100k) and ``property`` (a flat list, each concept naming its parent with a
``parent`` property). Each concept has a display, an English synonym and a German
designation (``use`` synonym), a ``moduleId`` property; 2 % are retired (``status``
property). Each file is built twice, with and without the ``fhir.resources`` validation
(``--no-validate``), each in a fresh process through ``benchmarks/vocab_load.py``'s
:func:`measure`, which prints the time and the peak RSS (``ru_maxrss``).

Usage: python benchmarks/fhir_load.py [--sizes 100000] [--shapes nested property] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from pathlib import Path
from typing import Any

from vocab_load import ATHENA_WORDS, measure

SHAPES = ("nested", "property")


def _concept(i: int, rng: random.Random, shape: str) -> dict[str, Any]:
    name = " ".join(rng.choices(ATHENA_WORDS, k=4)) + f" {i}"
    properties: list[dict[str, Any]] = [{"code": "moduleId", "valueCode": "900000000000207008"}]
    if shape == "property" and i:
        properties.append({"code": "parent", "valueCode": str(100_000_000 + (i - 1) // 10)})
    if rng.random() < 0.02:
        properties.append({"code": "status", "valueCode": "retired"})
    return {
        "code": str(100_000_000 + i),
        "display": name,
        "designation": [
            {"language": "en", "use": {"code": "synonym"}, "value": f"{name} (synonym)"},
            {"language": "de", "use": {"code": "synonym"}, "value": f"{name} (de)"},
        ],
        "property": properties,
    }


def write_codesystem(path: Path, n: int, shape: str, seed: int = 0) -> None:
    """Write the synthetic CodeSystem of ``n`` concepts in ``shape`` to ``path``."""
    rng = random.Random(seed)
    concepts = [_concept(i, rng, shape) for i in range(n)]
    top = concepts
    if shape == "nested":
        for i in range(1, n):  # the 10-ary tree: concept i under concept (i - 1) // 10
            concepts[(i - 1) // 10].setdefault("concept", []).append(concepts[i])
        top = concepts[:1]
    resource = {
        "resourceType": "CodeSystem",
        "url": "http://snomed.info/sct",
        "status": "active",
        "content": "fragment",
        "property": [
            {
                "code": "parent",
                "uri": "http://hl7.org/fhir/concept-properties#parent",
                "type": "code",
            },
            {
                "code": "status",
                "uri": "http://hl7.org/fhir/concept-properties#status",
                "type": "code",
            },
            {"code": "moduleId", "type": "code"},
        ],
        "concept": top,
    }
    path.write_text(json.dumps(resource), encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000])
    parser.add_argument("--shapes", nargs="+", choices=SHAPES, default=list(SHAPES))
    parser.add_argument("--keep", type=Path, help="Write the synthetic data here (kept).")
    args = parser.parse_args()
    print(
        f"{'concepts':>10} {'shape':>9} {'validated':>9} {'file MB':>8} {'KG concepts':>11} "
        f"{'KG terms':>9} "
        f"{'is_a':>8} {'load s':>7} {'peak RSS MB':>11} {'after imports':>13}"
    )
    for size in args.sizes:
        for shape in args.shapes:
            with tempfile.TemporaryDirectory() as tmp:
                root = args.keep or Path(tmp)
                root.mkdir(parents=True, exist_ok=True)
                source = root / f"codesystem_{shape}_{size}.json"
                start = time.perf_counter()
                write_codesystem(source, size, shape)
                written = time.perf_counter() - start
                for validate in (True, False):
                    out = root / f"kg_{shape}_{size}_{validate}"
                    r = measure("fhir", source, out, {"validate": validate})
                    c = r["counts"]
                    print(
                        f"{size:>10,} {shape:>9} {'yes' if validate else 'no':>9} "
                        f"{source.stat().st_size / 2**20:>8.1f} {c['concepts']:>11,} "
                        f"{c['terms']:>9,} {c['relations']:>8,} {r['seconds']:>7.1f} "
                        f"{r['peak_rss_mb']:>11.0f} {r['rss_after_imports_mb']:>13.0f}"
                        f"   (written in {written:.1f} s)",
                        flush=True,
                    )


if __name__ == "__main__":
    main()
