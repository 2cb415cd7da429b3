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
Indexes, encoders and search spaces are cached per folder (reloaded when ``index.json``
changes) so repeated calls cost only the query encoding and search. Every function searches
through the one matcher (:class:`~termnorm.search.SpaceMatcher`): ``min_score`` makes it
abstain below a score, ``namespaces`` / ``semantic_types`` restrict it to some concepts.
"""

from __future__ import annotations

import functools
import logging
import threading
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict, Unpack, overload

from termnorm.index import Backend, TermIndex, parse_bytes
from termnorm.index.lookup import ConceptInfo
from termnorm.index.term_index import CARD_NAME
from termnorm.kg import KnowledgeGraph
from termnorm.search.candidate import Candidate, candidates_or_raise
from termnorm.search.defaults import DEFAULT_SIEVE_THRESHOLD, DEFAULT_WITH_SYNONYMS
from termnorm.search.domain import SearchSpace
from termnorm.search.matcher import SearchConfig, SpaceMatcher, build_strategy
from termnorm.search.strategies import SearchMode

if TYPE_CHECKING:
    from termnorm.encoders import TermEncoder
    from termnorm.mentions.synonyms import SynonymSources
    from termnorm.projects.settings import PipelineSettings
    from termnorm.search.batch import BatchReport
    from termnorm.search.candidate import RowMatcher
    from termnorm.search.rank.ranker import Ranker

__all__ = [
    "AnswerOptions",
    "add_synonyms",
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

IndexLike = TermIndex | str | Path | None
logger = logging.getLogger(__name__)

_lock = threading.RLock()
_indexes: dict[tuple[str, float], TermIndex] = {}
_encoders: dict[tuple[str, str, int, str], TermEncoder] = {}
_default_dir: Path | None = None
_spaces: weakref.WeakKeyDictionary[TermIndex, dict[str, SearchSpace]] = weakref.WeakKeyDictionary()
_normalizers: weakref.WeakKeyDictionary[TermIndex, dict[str, SpaceMatcher]] = (
    weakref.WeakKeyDictionary()
)
_rankers: dict[tuple[str, float], Ranker] = {}


def load_kg(path: str | Path) -> KnowledgeGraph:
    """Read a KG folder written by ``termnorm kg build``."""
    return KnowledgeGraph.load(path)


def load_index(path: str | Path) -> TermIndex:
    """Read an index folder (cached until its ``index.json`` changes); nothing is re-encoded."""
    folder = Path(path).resolve()
    card = folder / CARD_NAME
    key = (str(folder), card.stat().st_mtime if card.is_file() else 0.0)
    with _lock:
        if key not in _indexes:
            _indexes[key] = TermIndex.load(folder)
        return _indexes[key]


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
        kg_dir, out, model=model, pooling=pooling, max_length=max_length, runtime=runtime,
        threads=threads, backend=backend, memory_budget=budget, batch_size=batch_size,
        show_progress=show_progress, overwrite=overwrite, scale=scale,
    )  # fmt: skip
    with _lock:
        _encoders[_encoder_key(index, runtime)] = encoder
    return index


def _encoder_key(index: TermIndex, runtime: str) -> tuple[str, str, int, str]:
    model = index.card["model"]
    fingerprint, pooling = str(model["fingerprint"]), str(model["pooling"])
    return (fingerprint, pooling, int(model["max_length"]), runtime)


def _resolve(index: IndexLike) -> TermIndex:
    if isinstance(index, TermIndex):
        return index
    if index is None:
        return load_index(_default_index_dir())
    return load_index(index)


def _default_index_dir() -> Path:
    """The default index folder, built on first use (progress bar) and then reused."""
    global _default_dir
    from termnorm.index.default import default_index_folder

    with _lock:
        if _default_dir is None or not (_default_dir / CARD_NAME).is_file():
            _default_dir = default_index_folder()
        return _default_dir


def search_space(
    index: IndexLike = None,
    runtime: str = "torch",
    threads: int | None = None,
    model: str | Path | None = None,
) -> SearchSpace:
    """The (cached) :class:`~termnorm.search.SearchSpace` of ``index`` with its own encoder,
    run by ``runtime`` (any runtime of the index's model; see :func:`build_index`).

    ``model``: the encoder folder when it is no longer where the index card says (moved);
    its fingerprint must match the card's (:meth:`TermIndex.load_encoder`).
    """
    resolved = _resolve(index)
    with _lock:
        per_runtime = _spaces.setdefault(resolved, {})
        if runtime not in per_runtime:
            key = _encoder_key(resolved, runtime)
            if key not in _encoders:
                encoder = resolved.load_encoder(model)
                encoder.set_runtime(runtime, threads=threads)
                _encoders[key] = encoder
            per_runtime[runtime] = SearchSpace(resolved, _encoders[key])
        return per_runtime[runtime]


def get_normalizer(
    index: IndexLike = None,
    mode: SearchMode | str = "term",
    runtime: str = "torch",
    model: str | Path | None = None,
) -> SpaceMatcher:
    """The (cached) plain normalizer of ``index``: O-T (``mode="term"``) or O-C
    (``mode="concept"``) with the index's own encoder, run by ``runtime``; ``model`` as in
    :func:`search_space`."""
    space = search_space(index, runtime, model=model)
    mode = SearchMode(mode)
    key = f"{mode.value}/{runtime}"
    with _lock:
        per_index = _normalizers.setdefault(space.index, {})
        if key not in per_index:
            per_index[key] = SpaceMatcher(
                space, SearchConfig(mode.strategy), name=mode.matcher_name
            )
        return per_index[key]


class AnswerOptions(TypedDict, total=False):
    """Keyword options of :func:`normalize` and :func:`normalize_file`.

    ``min_score``: candidates scoring below it are dropped (a term may get none).
    ``namespaces`` (``["HP"]``) and ``semantic_types`` (``["Disease or Syndrome"]``):
    only concepts in any of them (both given: in both); an unknown one raises
    :class:`~termnorm.search.filters.FilterError` listing what the index has.
    ``max_chars``: the longest accepted term (default 1000); longer ones raise
    :class:`~termnorm.search.QueryError` (in files: the row's ``error``).
    """

    min_score: float | None
    namespaces: Sequence[str] | None
    semantic_types: Sequence[str] | None
    max_chars: int | None


Context = str | Sequence[str | None] | None


def load_ranker(path: str | Path) -> Ranker:
    """Read a ranker folder (``termnorm rank train``), cached until its card changes."""
    from termnorm.search.rank.ranker import CARD_NAME as RANKER_CARD
    from termnorm.search.rank.ranker import load_ranker as load

    folder = Path(path).resolve()
    card = folder / RANKER_CARD
    key = (str(folder), card.stat().st_mtime if card.is_file() else 0.0)
    with _lock:
        if key not in _rankers:
            _rankers[key] = load(folder)
        return _rankers[key]


_learned: dict[tuple[int, str, str, float], RowMatcher] = {}


def _learned_stages(
    matcher: SpaceMatcher,
    options: AnswerOptions,
    hybrid: str | Path | None,
    combiner: str | Path | None,
    ranker: Ranker | str | Path | None,
    k_c: int,
) -> RowMatcher:
    """``matcher`` configured by ``options``, then hybrid recall (a ``termnorm rank hybrid``
    card), then the learned combiner (a ``termnorm rank combine`` card; ``min_score`` is then
    a probability) or the ranker. Loaded stages are cached per matcher and card version."""
    if combiner is None:
        loaded = ranker if not isinstance(ranker, str | Path) else load_ranker(ranker)
        learned = loaded is not None and loaded.combiner is not None
        rest = {key: value for key, value in options.items() if key != "min_score" or not learned}
        recall: RowMatcher = matcher.configure(**rest)  # type: ignore[arg-type]
        if hybrid is not None:
            recall = _cached_stage(recall, "hybrid", hybrid)
        return _with_ranker(recall, loaded, k_c, options.get("min_score") if learned else None)
    if ranker is not None:
        raise ValueError("a combiner card names its own ranker (if any): drop ranker=")
    rest = {key: value for key, value in options.items() if key != "min_score"}
    recall = matcher.configure(**rest)  # type: ignore[arg-type]
    if hybrid is not None:
        recall = _cached_stage(recall, "hybrid", hybrid)
    combined = _cached_stage(recall, "combiner", combiner)
    min_p = options.get("min_score")
    return combined if min_p is None else combined.with_min_probability(min_p)  # type: ignore[attr-defined]


def _cached_stage(recall: RowMatcher, kind: str, card: str | Path) -> RowMatcher:
    from termnorm.search.rank.combiner_fit import load_combined
    from termnorm.search.rank.hybrid_fit import load_hybrid

    path = Path(card)
    key = (id(recall), kind, str(path.resolve()), path.stat().st_mtime)
    with _lock:
        if key not in _learned:
            loader = load_hybrid if kind == "hybrid" else load_combined
            _learned[key] = loader(path, recall)  # type: ignore[arg-type]
        return _learned[key]


def _with_ranker(
    matcher: RowMatcher, ranker: Ranker | None, k_c: int, min_probability: float | None = None
) -> RowMatcher:
    """``matcher`` followed by ``ranker`` in its default mode (the learned combiner's
    probability when the folder carries one, else the paper's fusion), or ``matcher`` when
    there is none."""
    if ranker is None:
        return matcher
    from termnorm.search.rank.matcher import RankedMatcher

    return RankedMatcher(matcher, ranker, k_c=k_c, min_probability=min_probability)


@overload
def normalize(  # type: ignore[overload-overlap]  # a str is also a Sequence[str]
    terms: str, index: IndexLike = None, k: int = 5, mode: str = "term",
    context: Context = None, runtime: str = "torch", ranker: Ranker | str | Path | None = None,
    k_c: int = 10, synonyms: SynonymSources | None = None, strategy: str | None = None,
    hybrid: str | Path | None = None, combiner: str | Path | None = None,
    **options: Unpack[AnswerOptions],
) -> list[Candidate]: ...  # fmt: skip
@overload
def normalize(
    terms: Sequence[str], index: IndexLike = None, k: int = 5, mode: str = "term",
    context: Context = None, runtime: str = "torch", ranker: Ranker | str | Path | None = None,
    k_c: int = 10, synonyms: SynonymSources | None = None, strategy: str | None = None,
    hybrid: str | Path | None = None, combiner: str | Path | None = None,
    **options: Unpack[AnswerOptions],
) -> list[list[Candidate]]: ...  # fmt: skip
def normalize(
    terms: str | Sequence[str],
    index: IndexLike = None,
    k: int = 5,
    mode: str = "term",
    context: Context = None,
    runtime: str = "torch",
    ranker: Ranker | str | Path | None = None,
    k_c: int = 10,
    synonyms: SynonymSources | None = None,
    strategy: str | None = None,
    hybrid: str | Path | None = None,
    combiner: str | Path | None = None,
    **options: Unpack[AnswerOptions],
) -> list[Candidate] | list[list[Candidate]]:
    """Top-``k`` concepts for one term (a list) or for each of several terms (a list of lists).

    ``min_score=``, ``namespaces=`` and ``semantic_types=`` abstain and filter
    (:class:`AnswerOptions`). ``context``: the terms' document text (one string for all, or
    one per term, ``None`` for none); short forms it defines (Ab3P) are expanded and the
    better of the two rankings kept, its candidates' ``expanded_from`` set
    (:mod:`termnorm.search.context`). Raises :class:`~termnorm.search.QueryError` for an
    empty, whitespace-only, non-text or over-long term, and for ``terms`` that is neither a
    text nor a list of texts (``None``, ``bytes``, a number). ``runtime``: the encoder's
    inference runtime (``torch``, ``bf16``, ``onnx``, ``onnx-int8``, ``auto``). ``ranker``
    (a ranker folder from ``termnorm rank train`` or a loaded
    :class:`~termnorm.search.rank.Ranker`, trained on this index): the top ``k_c``
    candidates are reordered by the fused recall and ranker scores
    (:class:`~termnorm.search.rank.RankedMatcher`); each candidate then carries its
    ``recall_score`` and ``ranker_score``. ``synonyms``: domain synonyms (a synonym file, a
    list of them, or ``(concept_id, text)`` pairs; see :func:`add_synonyms`) searched by
    ``strategy`` (default ``d-t+od-t`` with synonyms, else the plain ``mode``); files are
    encoded once per index and cached until they change. ``hybrid``: a hybrid recall card
    (``termnorm rank hybrid``: dense + char 3-gram TF-IDF candidates); ``combiner``: a learned
    combiner card (``termnorm rank combine``): candidates ordered by the probability that
    each is correct, ``min_score`` then a probability threshold.
    """
    _check_terms(terms)
    base = _strategy_matcher(index, mode, runtime, synonyms, strategy)
    matcher = _learned_stages(base, options, hybrid, combiner, ranker, k_c)
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
    mode: str = "term",
    show_progress: bool = True,
    context_column: str | None = None,
    abbreviations: str | None = None,
    ranker: Ranker | str | Path | None = None,
    k_c: int = 10,
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
    strategy: str | None = None,
    **options: Unpack[AnswerOptions],
) -> BatchReport:
    """Normalize a column of a CSV/TSV/JSONL/Parquet file into ``output`` (same rows, in order,
    with ``concept_id``, ``concept_name``, ``score``, ``matched_term``, ``error`` added; see
    :mod:`termnorm.search.batch`). ``min_score=``, ``namespaces=`` and ``semantic_types=`` as
    for :func:`normalize`; a row left without a concept by ``min_score`` has the reason in
    ``error`` and is counted in ``BatchReport.abstained``. ``context_column`` (default
    ``document`` or ``context`` when present) holds each row's document text: abbreviations
    it defines are expanded (``abbreviations="none"`` turns this off) and an
    ``expanded_from`` column is added. ``column`` defaults to the one column named
    text/term/mention (or the file's only column), else the run is refused; the report's
    ``column`` says which was used. ``ranker`` and ``k_c`` as for :func:`normalize`.

    ``prefix`` names the added columns (``"termnorm_"``) when the input has columns of the
    same names (refused otherwise); ``encoding``/``errors`` (``strict``, ``replace``) decode
    text files. ``synonyms`` and ``strategy`` as for :func:`normalize`. An interrupted run resumes when run again with the same arguments
    (``restart=True`` starts over); ``chunk_rows`` rows are written at a time.
    ``engine="ray"``: Parquet input, ``output`` a folder of parts, ``workers`` Ray actors
    each loading ``index`` (a folder path) once, on the cluster at ``ray_address`` if given
    (:mod:`termnorm.search.ray_batch`)."""
    from termnorm.search.batch import DEFAULT_CHUNK_ROWS
    from termnorm.search.batch import normalize_file as run
    from termnorm.search.engines import Engine

    chunk_rows = chunk_rows or DEFAULT_CHUNK_ROWS
    settings: dict[str, object] = {"mode": mode, "k_c": k_c, "strategy": strategy}
    if synonyms is not None:
        from termnorm.mentions.synonyms import as_sources

        shown = [str(Path(s).resolve()) if isinstance(s, Path) else s for s in as_sources(synonyms)]
        settings["synonyms"] = shown
    if ranker is not None:
        if not isinstance(ranker, str | Path):
            raise ValueError(
                "normalize_file needs the ranker's folder (a path), so that a resumed run can "
                "check it is the same ranker"
            )
        settings["ranker"] = str(Path(ranker).resolve())
    if Engine(engine) is Engine.RAY:
        from termnorm.search.ray_batch import normalize_file_ray

        if isinstance(index, TermIndex):
            if index.path is None:
                raise ValueError(
                    "engine='ray' needs an index saved to a folder: each worker loads it"
                )
            index = index.path
        from termnorm.search.batch import index_identity

        folder = Path(index) if index is not None else _default_index_dir()
        settings["index"] = {"path": str(folder.resolve()), **index_identity(load_index(folder))}
        factory = functools.partial(
            _file_matcher, str(folder), mode, options, None if ranker is None else str(ranker), k_c,
            synonyms, strategy,
        )  # fmt: skip
        return normalize_file_ray(
            factory, input, output, column, k, chunk_rows, show_progress, context_column,
            abbreviations, prefix=prefix, workers=workers, address=ray_address, restart=restart,
            settings={**settings, **options},
        )  # fmt: skip
    matcher = _file_matcher(index, mode, options, ranker, k_c, synonyms, strategy)
    return run(
        matcher, input, output, column, k, chunk_rows, show_progress=show_progress,
        context=context_column, abbreviations=abbreviations, prefix=prefix, encoding=encoding,
        errors=errors, restart=restart, settings=settings,
    )  # fmt: skip


def _file_matcher(
    index: IndexLike, mode: str, options: AnswerOptions, ranker: Ranker | str | Path | None = None,
    k_c: int = 10, synonyms: SynonymSources | None = None, strategy: str | None = None,
) -> RowMatcher:  # fmt: skip
    """The matcher of :func:`normalize_file` (module level, so that Ray can ship a
    ``functools.partial`` of it to its workers)."""
    base = _strategy_matcher(index, mode, "torch", synonyms, strategy)
    return _learned_stages(base, options, None, None, ranker, k_c)


def project_matcher(
    settings: PipelineSettings, synonyms: Sequence[tuple[str, str]] = ()
) -> RowMatcher:
    """The matcher of a mapping project's ``settings`` (:mod:`termnorm.projects`), built as
    :func:`normalize` builds one from the same arguments: the index and its encoder, the
    synonym files plus ``synonyms`` (the project's approved ``(concept_id, text)`` mappings)
    as domain synonyms, the strategy (``None``: ``d-t+od-t`` once there are synonyms; a
    strategy that searches domain synonyms is ``o-t`` while there are none: a project's first
    run has no approved mapping yet), then hybrid recall, the combiner or the ranker. What ``termnorm map run`` passes to
    :func:`termnorm.projects.run_project`."""
    from termnorm.search.defaults import default_strategy

    space = search_space(settings.index, settings.runtime)
    if settings.synonyms:
        space = _with_synonyms(space, [Path(s) for s in settings.synonyms])
    if synonyms:
        from termnorm.errors import EmptyResultError

        pairs = [(text, (concept_id,)) for concept_id, text in synonyms]
        try:
            space = space.with_synonyms(pairs, source="project")[0]
        except EmptyResultError as exc:  # every approved concept is outside this index
            logger.warning("the project's approved mappings are not searched: %s", exc)
    from termnorm.search.strategies import parse_strategy

    with_synonyms = space.domain is not None
    strategy = settings.strategy or default_strategy(with_synonyms)
    if not with_synonyms and parse_strategy(strategy).needs_domain:
        logger.info(
            "strategy %s searches domain synonyms and the project has none yet: %s until the "
            "first approved mapping", strategy, default_strategy(False),
        )  # fmt: skip
        strategy = default_strategy(False)
    base = build_strategy(space, strategy)
    options: AnswerOptions = {"min_score": settings.min_score}
    return _learned_stages(
        base, options, settings.hybrid, settings.combiner, settings.ranker, settings.k_c
    )


def lookup(concept_id: str, index: IndexLike = None) -> ConceptInfo:
    """The concept of ``index`` with this ID (its own, a bare one such as ``D005955``, or an
    alternative ID): name, semantic types, alt IDs, terms with their KG source and
    preferred flag, and KG neighbours (``relations``; ``None`` for an index built before
    indexes held them: rebuild it). Raises
    :class:`~termnorm.index.lookup.UnknownConceptError` (a ``KeyError``) when no concept has
    it."""
    return _resolve(index).concept(concept_id)


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
    return _with_synonyms(search_space(index), synonyms, format)


def _with_synonyms(
    space: SearchSpace, synonyms: SynonymSources, format: str | None = None
) -> SearchSpace:
    """``space`` plus ``synonyms``; spaces of synonym files are cached per file set until a
    file changes (pairs are encoded on every call)."""
    from termnorm.mentions.synonyms import as_sources
    from termnorm.search.domain import add_synonym_sources

    sources = as_sources(synonyms)
    if not all(isinstance(s, Path) for s in sources):
        return add_synonym_sources(space, synonyms, format)[0]
    files = [Path(str(s)).resolve() for s in sources]
    key = f"synonyms {format} {id(space)} " + " ".join(f"{p}@{p.stat().st_mtime_ns}" for p in files)
    with _lock:
        cache = _spaces.setdefault(space.index, {})
        if key not in cache:
            cache[key] = add_synonym_sources(space, files, format)[0]
        return cache[key]


def _strategy_matcher(
    index: IndexLike,
    mode: str,
    runtime: str,
    synonyms: SynonymSources | None,
    strategy: str | None,
) -> SpaceMatcher:
    """The plain normalizer of ``mode``, or ``strategy`` over ``index`` plus ``synonyms``."""
    if synonyms is None and strategy is None:
        return get_normalizer(index, mode, runtime)
    if SearchMode(mode) is not SearchMode.TERM:
        raise ValueError("mode='concept' and strategy/synonyms exclude each other; use 'o-c'")
    space = search_space(index, runtime)
    return get_strategy(strategy or DEFAULT_WITH_SYNONYMS, space, synonyms)


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
        space = _with_synonyms(space, synonyms)
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

        inputs = {"--kg": run.kg, "--base-model": run.base_model, "--kge": run.kge,
                  "--dev": run.dev, "--dev-kg": run.dev_kg, "--keywords": run.keywords,
                  "--mentions": run.mentions}  # fmt: skip
        refuse_input_overlap(run.out, inputs)
    graph = KnowledgeGraph.load(run.kg)
    evaluator = None
    if run.dev is not None:
        dev_graph = KnowledgeGraph.load(run.dev_kg) if run.dev_kg is not None else graph
        evaluator = DevEvaluator.from_file(dev_graph, run.dev, run.dev_format)
    return run_training(run, graph, evaluator=evaluator, resume=resume)


__all__ += ["train"]
