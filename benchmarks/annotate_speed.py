"""The dictionary detector's speed: abstracts per second in one process, on GSC+ dev.

The detector is built from a KG folder's names and terms (default ``kg/hpo_terms``:
``termnorm kg build --format hpo --no-annotations --out kg/hpo_terms``) — by default only the
concepts under ``--root`` (HP:0000118 Phenotypic abnormality, as FastHPOCR indexes HPO: the
modifiers "Severe", "Bilateral" and the modes of inheritance are not phenotypes; ``--root ''``
keeps every concept) — once from scratch and once from its cache, then run over the GSC+ dev abstracts (``--gold``, read with
:func:`termnorm.mentions.read_documents`) ``--repeat`` times; the best pass gives abstracts/s
(the machine is shared: the best pass is the least disturbed one). The issue's target is
≥ 1,000 abstracts/s on 2 cores; this script measures one process (one core).

Usage (from the repo root)::

    python benchmarks/annotate_speed.py [--kg kg/hpo_terms] [--repeat 20] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from termnorm.annotate import DictionaryDetector
from termnorm.kg import KnowledgeGraph
from termnorm.mentions import read_documents, read_mentions

GOLD = Path("../shared/benchmarks/hpo_gscplus/GSCplus_dev_gold.tsv")


def _under(kg: KnowledgeGraph, root: str) -> set[str]:
    """``root`` and every concept below it through ``is_a`` (head is_a tail)."""
    children: dict[str, list[str]] = {}
    for head, relation, tail in kg.relations[["head", "relation", "tail"]].itertuples(False):
        if relation == "is_a":
            children.setdefault(tail, []).append(head)
    seen, todo = {root}, [root]
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in seen:
                seen.add(child)
                todo.append(child)
    return seen


def _names(kg: KnowledgeGraph, root: str) -> list[tuple[str, str]]:
    """``(concept_id, name)`` of the concepts' names and terms, under ``root`` when given."""
    keep = _under(kg, root) if root else set(kg.concepts["concept_id"])
    pairs = [*zip(kg.concepts["concept_id"], kg.concepts["name"], strict=True)]
    pairs += zip(kg.terms["concept_id"], kg.terms["term"], strict=True)
    return [(cid, name) for cid, name in pairs if cid in keep]


def _timed_build(names: list[tuple[str, str]], cache: Path) -> tuple[DictionaryDetector, float]:
    t0 = time.perf_counter()
    detector = DictionaryDetector.from_names(names, cache=cache)
    return detector, time.perf_counter() - t0


def _best_pass(detector: DictionaryDetector, texts: Sequence[str], repeat: int) -> float:
    """Seconds of the fastest of ``repeat`` passes over ``texts``."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for text in texts:
            detector.detect(text)
        best = min(best, time.perf_counter() - t0)
    return best


def _prf(predicted: set[tuple[str, ...]], gold: set[tuple[str, ...]]) -> dict[str, float]:
    hits = len(predicted & gold)
    p = hits / len(predicted) if predicted else 0.0
    r = hits / len(gold) if gold else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return {"precision": round(p, 3), "recall": round(r, 3), "f1": round(f, 3)}


def _quality(detector: DictionaryDetector, documents: dict[str, str], gold: Path) -> dict:
    """Mention- and document-level precision, recall and F1 of the spans against ``gold``."""
    truth = {
        (m.doc_id, str(m.start), str(m.end), cid) for m in read_mentions(gold) for cid in m.gold_ids
    }
    found = {
        (doc_id, str(s.start), str(s.end), cid)
        for doc_id, text in documents.items()
        for s in detector.detect(text)
        for cid in s.concept_ids
    }
    return {
        "mention_level": _prf(found, truth),
        "document_level": _prf({(d, c) for d, *_, c in found}, {(d, c) for d, *_, c in truth}),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kg", type=Path, default=Path("kg/hpo_terms"), help="KG folder")
    parser.add_argument("--root", default="HP:0000118", help="index only concepts below it")
    parser.add_argument("--gold", type=Path, default=GOLD, help="GSC+ dev file (documents)")
    parser.add_argument("--repeat", type=int, default=20, help="passes over the abstracts")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args(argv)
    names = _names(KnowledgeGraph.load(args.kg), args.root)
    documents = read_documents(args.gold)
    texts = list(documents.values())
    with tempfile.TemporaryDirectory(prefix="termnorm-dict-") as tmp:
        detector, cold = _timed_build(names, Path(tmp))
        _, warm = _timed_build(names, Path(tmp))
    seconds = _best_pass(detector, texts, args.repeat)
    spans = sum(len(detector.detect(t)) for t in texts)
    figures = {
        "root": args.root or None,
        "abstracts": len(texts),
        "characters": sum(map(len, texts)),
        "spans": spans,
        "build_s": round(cold, 2),
        "build_from_cache_s": round(warm, 2),
        "abstracts_per_s_1_process": round(len(texts) / seconds, 1),
        "counts": detector.compiled.card["counts"],
        **_quality(detector, documents, args.gold),
    }
    print(json.dumps(figures, indent=2))
    if args.json is not None:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
