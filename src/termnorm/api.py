"""The public Python API: thin functions over lazily built, cached objects.

>>> import termnorm
>>> termnorm.normalize("heart attack")            # top-5 Candidates from the default index
>>> termnorm.normalize(["MI", "HTN"], index="idx/medic", k=1)
>>> termnorm.normalize("seizure", index="idx/hpo", min_score=0.8, namespaces=["HP"])
>>> termnorm.normalize_file("terms.csv", "terms.normalized.csv", index="idx/medic")
>>> termnorm.normalize("BPAD", context="... bipolar affective disorder (BPAD) ...")
>>> termnorm.normalize("breast cancer", index="idx/medic", ranker="rankers/ncbi-kar")
>>> termnorm.normalize("MI", index="idx/medic", synonyms=["train.txt", "dev.txt"])
>>> termnorm.api.lookup("D005955", index="idx/medic")   # alt IDs and bare IDs resolve

``index`` is a :class:`~termnorm.index.TermIndex`, an index folder, or ``None`` for the
default index (HPO + all-MiniLM-L6-v2, built once into the user cache with a progress bar).
The search is described by the keywords of :class:`~termnorm.search.spec.PipelineSpec`
(``mode``, ``strategy``, ``min_score``, ``namespaces``, ``ranker``, ...: the options of
``termnorm normalize``) and built by :func:`termnorm.search.build.build`, which caches
indexes, encoders, search spaces and matchers (reloaded when a card changes), so repeated
calls cost only the query encoding and search.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias, TypedDict, Unpack, cast, overload

from termnorm.index import Backend, TermIndex, parse_bytes
from termnorm.index.lookup import ConceptInfo
from termnorm.kg import KnowledgeGraph
from termnorm.search.build import (
    IndexLike,
    build,
    load_index,
    load_ranker,
    remember_encoder,
    resolve_index,
    search_space,
    with_synonyms,
)
from termnorm.search.candidate import Candidate, candidates_or_raise
from termnorm.search.defaults import DEFAULT_SIEVE_THRESHOLD
from termnorm.search.domain import SearchSpace
from termnorm.search.space_matcher import SpaceMatcher, build_strategy
from termnorm.search.spec import PipelineSpec

if TYPE_CHECKING:
    from termnorm.annotate import Annotation
    from termnorm.encoders.runtime import Runtime
    from termnorm.mentions.synonyms import SynonymSources
    from termnorm.search.batch import BatchReport
    from termnorm.search.candidate import RowMatcher
    from termnorm.search.rank import Ranker

__all__ = [
    "AnswerOptions",
    "add_synonyms",
    "annotate",
    "build_index",
    "get_normalizer",
    "get_strategy",
    "load_index",
    "load_kg",
    "load_ranker",
    "lookup",
    "normalize",
    "normalize_file",
    "project_matcher",
    "search_space",
]

logger = logging.getLogger(__name__)


def load_kg(path: str | Path) -> KnowledgeGraph:
    """Read a KG folder written by ``termnorm kg build``."""
    return KnowledgeGraph.load(path)


def build_index(
    kg_dir: str | Path,
    model: str | Path | None = None,
    pooling: str | None = None,
    backend: Backend | str = Backend.AUTO,
    out: str | Path | None = None,
    memory_budget: int | str | None = None,
    max_length: int | None = None,
    batch_size: int = 256,
    show_progress: bool = True,
    runtime: str = "torch",
    threads: int | None = None,
    overwrite: bool = False,
    *,
    engine: str = "local",
    workers: int | None = None,
    address: str | None = None,
    shard_size: int | None = None,
    device: str = "auto",
) -> TermIndex:
    """Encode a KG folder's terms with ``model`` (default all-MiniLM-L6-v2) and index them.

    Saved to ``out`` when given; checked before any work: a non-empty ``out`` is refused
    unless ``overwrite``, and ``out`` never may be (in) ``kg_dir`` or ``model``
    (:func:`termnorm._artifacts.prepare_output`). ``memory_budget`` (bytes or ``"4GB"``) steers the automatic
    backend choice; ``None`` means half of this machine's memory. ``pooling`` and
    ``max_length`` default as in :meth:`termnorm.encoders.TermEncoder.load` (the folder's
    pooling; 32 tokens, or the folder's ``max_seq_length`` when smaller). ``runtime``
    (``torch``, ``bf16``, ``onnx``, ``onnx-int8``, ``auto``; :mod:`termnorm.encoders.runtime`)
    and ``threads`` run the encoder; the card records the runtime.

    ``engine="ray"`` encodes the shards (``shard_size`` distinct strings each) on
    ``workers`` Ray actors (a local Ray, or the cluster at ``address``); ``device`` is
    ``cpu``, ``cuda`` or ``auto``. A build with ``out`` keeps its finished shards in
    ``OUT.shards`` until it is saved: the same call after a kill encodes only the missing
    ones (:mod:`termnorm.index.build`).
    """
    from termnorm.encoders.device import Device
    from termnorm.engines import Engine
    from termnorm.index.build import build_index_folder
    from termnorm.index.build_config import DEFAULT_SHARD_SIZE, ScaleConfig

    scale = ScaleConfig(
        Engine(engine), workers, address, shard_size or DEFAULT_SHARD_SIZE, Device(device)
    )
    budget = parse_bytes(memory_budget) if memory_budget is not None else None
    index, encoder = build_index_folder(
        kg_dir,
        out,
        model=model,
        pooling=pooling,
        max_length=max_length,
        runtime=runtime,
        threads=threads,
        backend=backend,
        memory_budget=budget,
        batch_size=batch_size,
        show_progress=show_progress,
        overwrite=overwrite,
        scale=scale,
    )
    remember_encoder(index, runtime, encoder)
    return index


def get_normalizer(
    index: IndexLike = None,
    mode: str = "term",
    runtime: str = "torch",
    model: str | Path | None = None,
) -> SpaceMatcher:
    """The (cached) plain normalizer of ``index``: O-T (``mode="term"``) or O-C
    (``mode="concept"``) with the index's own encoder, run by ``runtime``; ``model`` as in
    :func:`search_space`."""
    spec, loaded, _, _ = _spec(
        index, None, None, {"mode": mode, "runtime": runtime, "model": model, "shorthand": "none"}
    )
    return cast(SpaceMatcher, build(spec, loaded))


class AnswerOptions(TypedDict, total=False):
    """The keywords of :func:`normalize` and :func:`normalize_file` beyond ``index``,
    ``ranker`` and ``synonyms``: the fields of :class:`~termnorm.search.spec.PipelineSpec`
    (what ``termnorm normalize --help`` describes under the same names).

    ``min_score``: candidates scoring below it are dropped (a term may get none).
    ``namespaces`` (``["HP"]``) and ``semantic_types`` (``["Disease or Syndrome"]``):
    only concepts in any of them (both given: in both); ``excluded_types``: no concept of
    any of these semantic types (``["Mode of inheritance"]``); an unknown one raises
    :class:`~termnorm.search.filters.FilterError` listing what the index has.
    ``max_chars``: the longest accepted term (default 1000); longer ones raise
    :class:`~termnorm.search.QueryError` (in files: the row's ``error``).
    """

    mode: str
    runtime: Runtime | str
    threads: int | None
    model: str | Path | None
    strategy: str | None
    sieve_threshold: float
    min_score: float | None
    namespaces: Sequence[str] | None
    semantic_types: Sequence[str] | None
    excluded_types: Sequence[str] | None
    max_chars: int
    hybrid: str | Path | None
    combiner: str | Path | None
    k_c: int
    rank_mode: str | None
    fusion_weight: float
    theta: float
    multi: bool
    implication: str | Path | None
    shorthand: str


Context = str | Sequence[str | None] | None
RankerLike: TypeAlias = "Ranker | str | Path | None"


def _spec(
    index: IndexLike, ranker: RankerLike, synonyms: SynonymSources | None, fields: Any
) -> tuple[PipelineSpec, TermIndex | None, Ranker | None, SynonymSources | None]:
    """The spec of the API's arguments, and what goes beside it (a spec holds only what
    serialises): a loaded index, a loaded ranker, ``(concept_id, text)`` pairs."""
    from termnorm.mentions.synonyms import as_sources

    files: list[Path] = []
    sources = as_sources(synonyms) if synonyms is not None else []
    if sources and all(isinstance(s, Path) for s in sources):
        files, synonyms = cast(list[Path], sources), None
    loaded = index if isinstance(index, TermIndex) else None
    ranked = None if ranker is None or isinstance(ranker, str | Path) else ranker
    spec = PipelineSpec(
        index=index.path if isinstance(index, TermIndex) else index,  # type: ignore[arg-type]
        ranker=Path(ranker) if isinstance(ranker, str | Path) else None,
        synonyms=tuple(files),
        **fields,
    )
    return spec, loaded, ranked, synonyms


@overload
def normalize(  # type: ignore[overload-overlap]  # a str is also a Sequence[str]
    terms: str,
    index: IndexLike = None,
    k: int = 5,
    *,
    context: Context = None,
    ranker: RankerLike = None,
    synonyms: SynonymSources | None = None,
    **spec: Unpack[AnswerOptions],
) -> list[Candidate]: ...
@overload
def normalize(
    terms: Sequence[str],
    index: IndexLike = None,
    k: int = 5,
    *,
    context: Context = None,
    ranker: RankerLike = None,
    synonyms: SynonymSources | None = None,
    **spec: Unpack[AnswerOptions],
) -> list[list[Candidate]]: ...
def normalize(
    terms: str | Sequence[str],
    index: IndexLike = None,
    k: int = 5,
    *,
    context: Context = None,
    ranker: RankerLike = None,
    synonyms: SynonymSources | None = None,
    **spec: Unpack[AnswerOptions],
) -> list[Candidate] | list[list[Candidate]]:
    """Top-``k`` concepts for one term (a list) or for each of several terms (a list of lists).

    The search is the :class:`~termnorm.search.spec.PipelineSpec` of the keywords
    (:class:`AnswerOptions`, the options of ``termnorm normalize``; an unknown keyword is a
    ``TypeError``). ``context``: the terms' document text (one string for all, or one per
    term, ``None`` for none); short forms it defines (Ab3P) are expanded and the better of the
    two rankings kept, its candidates' ``expanded_from`` set (:mod:`termnorm.search.context`).
    Raises :class:`~termnorm.search.QueryError` for an empty, whitespace-only, non-text or
    over-long term, and for ``terms`` that is neither a text nor a list of texts (``None``,
    ``bytes``, a number). ``ranker``: a ranker folder (``termnorm rank train``) or a loaded
    :class:`~termnorm.search.rank.Ranker` trained on this index; each candidate then carries
    its ``recall_score`` and ``ranker_score``. ``synonyms``: domain synonyms (a synonym file,
    a list of them, or ``(concept_id, text)`` pairs; see :func:`add_synonyms`); files are
    encoded once per index and cached until they change.
    """
    _check_terms(terms)
    pipeline, loaded, given, pairs = _spec(index, ranker, synonyms, spec)
    matcher = build(pipeline, loaded, ranker=given, synonyms=pairs)
    if context is None:
        if isinstance(terms, str):
            return matcher.normalize_batch([terms], k)[0]
        return matcher.normalize_batch(list(terms), k)
    from termnorm.search.context import ContextMatcher

    texts = [terms] if isinstance(terms, str) else list(terms)
    contexts = [context] * len(texts) if isinstance(context, str) else list(context)
    if len(contexts) != len(texts):
        raise ValueError(f"{len(texts)} terms but {len(contexts)} contexts: give one per term")
    results = ContextMatcher(matcher).normalize_in_context(texts, contexts, k)
    ranked = candidates_or_raise(results)
    return ranked[0] if isinstance(terms, str) else ranked


def _check_terms(terms: object) -> None:
    """:class:`QueryError` when ``terms`` is neither a text nor a sequence of texts."""
    from termnorm.search.query import QueryError

    if isinstance(terms, bytes | bytearray):
        raise QueryError("got bytes: decode it first, e.g. terms.decode('utf-8')")
    if not isinstance(terms, str | Sequence):
        got = "None" if terms is None else type(terms).__name__
        raise QueryError(f"expected a text or a list of texts, got {got}")


def normalize_file(
    input: str | Path,
    output: str | Path,
    index: IndexLike = None,
    column: str | None = None,
    k: int = 1,
    show_progress: bool = True,
    context_column: str | None = None,
    abbreviations: str | None = None,
    ranker: str | Path | None = None,
    *,
    prefix: str | None = None,
    encoding: str = "utf-8-sig",
    errors: str = "strict",
    restart: bool = False,
    chunk_rows: int | None = None,
    engine: str = "local",
    workers: int = 1,
    ray_address: str | None = None,
    synonyms: SynonymSources | None = None,
    **spec: Unpack[AnswerOptions],
) -> BatchReport:
    """Normalize a column of a CSV/TSV/JSONL/Parquet file into ``output`` (same rows, in order,
    with ``concept_id``, ``concept_name``, ``score``, ``matched_term``, ``error`` added; see
    :mod:`termnorm.search.batch`). The search is the spec of the keywords, as for
    :func:`normalize` (``ranker`` and ``synonyms`` as paths: a resumed run checks them); a
    row left without a concept by ``min_score`` has the reason in ``error`` and is counted
    in ``BatchReport.abstained``. ``context_column`` (default ``document`` or ``context``
    when present) holds each row's document text: abbreviations it defines are expanded
    (``abbreviations="none"`` turns this off) and an ``expanded_from`` column is added.
    ``column`` defaults to the one column named text/term/mention (or the file's only
    column), else the run is refused; the report's ``column`` says which was used.

    ``prefix`` names the added columns (``"termnorm_"``) when the input has columns of the
    same names (refused otherwise); ``encoding``/``errors`` (``strict``, ``replace``) decode
    text files. An interrupted run resumes when run again with the same arguments (the job
    is the spec and the matcher's identity, as ``termnorm normalize --input`` records it;
    ``restart=True`` starts over); ``chunk_rows`` rows are written at a time.
    ``engine="ray"``: Parquet input, ``output`` a folder of parts, ``workers`` Ray actors
    each loading ``index`` (a folder path) once, on the cluster at ``ray_address`` if given
    (:mod:`termnorm.search.ray_batch`)."""
    from termnorm.search.file_spec import NormalizeFileSpec
    from termnorm.search.job import normalize_file_job

    if ranker is not None and not isinstance(ranker, str | Path):
        raise ValueError(
            "normalize_file needs the ranker's folder (a path), so that a resumed run can "
            "check it is the same ranker"
        )
    pipeline, loaded, _, pairs = _spec(index, ranker, synonyms, spec)
    job = NormalizeFileSpec.of(
        input,
        output,
        pipeline=pipeline,
        column=column,
        k=k,
        show_progress=show_progress,
        context_column=context_column,
        abbreviations=abbreviations,
        prefix=prefix,
        encoding=encoding,
        errors=errors,
        restart=restart,
        chunk_rows=chunk_rows,
        engine=engine,
        workers=workers,
        ray_address=ray_address,
    )
    return normalize_file_job(job, index=loaded, synonyms=pairs)


def annotate(
    texts: str | Sequence[str],
    index: IndexLike = None,
    k: int = 5,
    **options: Any,
) -> list[Annotation] | list[list[Annotation]]:
    """The concepts in running text: :class:`~termnorm.annotate.Annotation`\\ s of one text
    (a list) or of each of several (a list of lists), found by the dictionary of ``index``
    (and ``synonyms``), normalized through the spec of the keywords (those of
    :func:`normalize`: ``min_score`` drops spans that are not concepts), with offsets into
    the text and negated/hypothetical/historical/family flags. See
    :func:`termnorm.annotate.texts.annotate_texts` for the keywords.

    >>> termnorm.annotate("Patient denies chest pain; history of MI.", min_score=0.8)
    """
    from termnorm.annotate.texts import annotate_texts

    return annotate_texts(texts, index, k, **options)


def project_matcher(spec: PipelineSpec, synonyms: Sequence[tuple[str, str]] = ()) -> RowMatcher:
    """The matcher of a mapping project's ``spec`` (:mod:`termnorm.projects`):
    :func:`~termnorm.search.build.build` of it, as :func:`normalize` builds, with
    ``synonyms`` (the project's approved ``(concept_id, text)`` mappings) as domain synonyms.
    What ``termnorm map run`` passes to :func:`termnorm.projects.run_project`."""
    return build(spec, synonyms=list(synonyms) or None)


def lookup(concept_id: str, index: IndexLike = None) -> ConceptInfo:
    """The concept of ``index`` with this ID (its own, a bare one such as ``D005955``, or an
    alternative ID): name, semantic types, alt IDs, terms with their KG source and
    preferred flag, and KG neighbours (``relations``; ``None`` for an index built before
    indexes held them: rebuild it). Raises
    :class:`~termnorm.index.lookup.UnknownConceptError` (a ``KeyError``) when no concept has
    it."""
    return resolve_index(index).concept(concept_id)


def add_synonyms(
    index: IndexLike, synonyms: SynonymSources, format: str | None = None
) -> SearchSpace:
    """``index`` plus domain synonyms, for the D/OD search strategies (see :func:`get_strategy`).

    ``synonyms``: a ``concept_id<TAB>text`` file, any annotated mention file ``termnorm eval``
    reads, a list of such files (all added), or ``(concept_id, text)`` pairs. Only the new texts are encoded; the index itself
    is not changed (``space.synonym_report`` counts what was kept and dropped, and why).
    Candidates matched at a synonym report ``source="domain"`` and the file's name as
    ``term_source`` (``"domain"`` for pairs).
    """
    return with_synonyms(search_space(index), synonyms, format)


def get_strategy(
    strategy: str = "o-t",
    index: IndexLike | SearchSpace = None,
    synonyms: SynonymSources | None = None,
    threshold: float = DEFAULT_SIEVE_THRESHOLD,
) -> SpaceMatcher:
    """A search strategy or sieve (``"o-t"``, ``"od-c"``, ``"d-t+od-t"``, ...) as a matcher.

    >>> space = termnorm.api.add_synonyms("idx/medic", "my_terms.tsv")
    >>> termnorm.api.get_strategy("d-t+od-t", space).normalize("primary HPT")

    ``.configure(min_score=..., namespaces=..., semantic_types=...)`` on the result
    abstains or filters as :func:`normalize` does.
    """
    space = index if isinstance(index, SearchSpace) else search_space(index)
    if synonyms is not None:
        space = with_synonyms(space, synonyms)
    return build_strategy(space, strategy, threshold)


# ---------------------------------------------------------------------- training
if TYPE_CHECKING:
    from termnorm.training import TrainConfig, TrainResult


def train(
    config: TrainConfig | None = None, *, resume: bool = False, **overrides: object
) -> TrainResult:
    """Train an encoder exactly as ``termnorm train`` does; the CLI calls this function.

    ``config`` (default: the recommended recipe, :class:`~termnorm.training.TrainConfig`)
    with ``overrides`` (its field names: ``kg``, ``out``, ``steps``, ``mentions``, ...; an
    unknown name is a ``ValueError`` naming the closest ones) sets the run; ``kg`` and
    ``out`` are required. With ``dev`` (and ``dev_format``) the model is evaluated on those
    mentions against ``dev_kg`` (default: ``kg``) every ``eval_every`` steps and at the end,
    keeping the best weights by ``dev_acc@1``; ``resume`` continues from the newest
    checkpoint in ``out``. Under torchrun each process runs one rank (DDP).

    Returns the :class:`~termnorm.training.TrainResult`: ``interrupted`` when SIGINT/SIGTERM
    stopped the run after writing a checkpoint (call again with ``resume=True``).

    >>> termnorm.train(kg="kg/medic", out="models/medic-od", train_data="od",
    ...                mentions=["NCBItrainset_corpus.txt"], wise_alpha=0.5)
    """
    from termnorm.evaluation.dev import DevEvaluator
    from termnorm.training import TrainConfig, run_training

    settings = {**(config.to_dict() if config is not None else {}), **overrides}
    run = TrainConfig.from_dict(settings, "termnorm.train")
    run.validate()
    if run.kg is None:
        raise ValueError("termnorm.train needs a KG folder: pass kg=PATH (--kg)")
    if run.out is not None:  # the trainer owns --overwrite/--resume; never write into an input
        from termnorm._artifacts import refuse_input_overlap

        inputs = {
            "--kg": run.kg,
            "--base-model": run.base_model,
            "--kge": run.kge,
            "--dev": run.dev,
            "--dev-kg": run.dev_kg,
            "--keywords": run.keywords,
            "--mentions": run.mentions,
        }
        refuse_input_overlap(run.out, inputs)
    graph = KnowledgeGraph.load(run.kg)
    evaluator = None
    if run.dev is not None:
        dev_graph = KnowledgeGraph.load(run.dev_kg) if run.dev_kg is not None else graph
        evaluator = DevEvaluator.from_file(dev_graph, run.dev, run.dev_format)
    return run_training(run, graph, evaluator=evaluator, resume=resume)


__all__ += ["train"]
