"""``build(spec) -> matcher``: the one assembly of a search from a :class:`PipelineSpec`.

Every face builds its search here: the CLI (``normalize``, ``eval normalize``), the Python
API (``termnorm.normalize``, ``normalize_file``, mapping projects), the Ray workers of a
batch job, and the service (which passes the space it already loaded). The path a query
walks is the one drawn in ``docs/ARCHITECTURE.md``::

    spec → index (+ its encoder, runtime) → search space (+ domain synonyms)
         → recall: the strategy of :func:`resolve_strategy` (a module or a sieve; the plain
           normalizer of ``mode`` when none is named and there are no domain synonyms),
           configured by ``max_chars``, ``min_score``, ``namespaces``, ``semantic_types``
         → the learned stages of :data:`termnorm.search.stages.STAGES`, in order: hybrid
           recall card → combiner card → ranker (fusion, multi-code)

``min_score`` is a cosine for the recall stage, or the probability threshold of the
learned stage (a combiner card, or a ranker that orders by its combiner's probability).

Loaded artifacts are cached: indexes per folder and card version, encoders per model and
runtime, search spaces per index and runtime (plus synonym files, per file version),
rankers per folder and card version, and built matchers per spec (and card versions), so a
repeated call costs only the query encoding and search. :func:`clear_caches` forgets them.
"""

from __future__ import annotations

import logging
import threading
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from termnorm.errors import EmptyResultError, EmptySpecError, SpecError
from termnorm.index.term_index import CARD_NAME, TermIndex
from termnorm.search.candidate import RowMatcher
from termnorm.search.defaults import resolve_strategy
from termnorm.search.domain import SearchSpace, SynonymReport, add_synonym_sources
from termnorm.search.space_matcher import SearchConfig, SpaceMatcher, build_strategy
from termnorm.search.spec import PipelineSpec
from termnorm.search.stages import apply_stages, stage_paths
from termnorm.search.stages.ranker import loading
from termnorm.search.stages.ranker.loading import implication_of, load_ranker
from termnorm.search.strategies import SearchMode

if TYPE_CHECKING:
    from termnorm.encoders import TermEncoder
    from termnorm.mentions.synonyms import SynonymSources
    from termnorm.search.stages.ranker.ranker import Ranker

__all__ = [
    "EmptySpecError",
    "IndexLike",
    "SpecError",
    "build",
    "clear_caches",
    "default_index_dir",
    "fit_recall",
    "implication_of",
    "load_index",
    "load_ranker",
    "recall_stage",
    "resolve_index",
    "resolve_strategy",
    "search_space",
    "with_synonyms",
]

IndexLike = TermIndex | str | Path | None
SynonymNotice = Callable[[str, SynonymReport], None]
"""Called with a synonym file's name and what was kept of it, when it is encoded."""
logger = logging.getLogger(__name__)

_lock = threading.RLock()
_indexes: dict[tuple[str, float], TermIndex] = {}
_encoders: dict[tuple[str, str, int, str], TermEncoder] = {}
_default_dir: list[Path] = []
_spaces: weakref.WeakKeyDictionary[TermIndex, dict[str, SearchSpace]] = weakref.WeakKeyDictionary()
_matchers: weakref.WeakKeyDictionary[TermIndex, dict[tuple[Any, ...], RowMatcher]] = (
    weakref.WeakKeyDictionary()
)


def clear_caches() -> None:
    """Forget every loaded index, encoder, space, ranker and matcher (tests, reloads)."""
    with _lock:
        for cache in (_indexes, _encoders, _default_dir, _spaces, _matchers):
            cache.clear()
    loading.clear_caches()


def _version(path: Path) -> float:
    return path.stat().st_mtime if path.is_file() else 0.0


def load_index(path: str | Path) -> TermIndex:
    """Read an index folder (cached until its ``index.json`` changes); nothing is re-encoded."""
    folder = Path(path).resolve()
    key = (str(folder), _version(folder / CARD_NAME))
    with _lock:
        if key not in _indexes:
            _indexes[key] = TermIndex.load(folder)
        return _indexes[key]


def default_index_dir() -> Path:
    """The default index folder, built on first use (progress bar) and then reused."""
    from termnorm.index.default import default_index_folder

    with _lock:
        if not _default_dir or not (_default_dir[0] / CARD_NAME).is_file():
            _default_dir[:] = [default_index_folder()]
        return _default_dir[0]


def resolve_index(index: IndexLike) -> TermIndex:
    """``index`` itself, the index of a folder, or (``None``) the default index (cached)."""
    if isinstance(index, TermIndex):
        return index
    return load_index(default_index_dir() if index is None else index)


def encoder_key(index: TermIndex, runtime: str) -> tuple[str, str, int, str]:
    """The cache key of ``index``'s encoder run by ``runtime`` (model, pooling, length)."""
    model = index.card["model"]
    fingerprint, pooling = str(model["fingerprint"]), str(model["pooling"])
    return (fingerprint, pooling, int(model["max_length"]), runtime)


def remember_encoder(index: TermIndex, runtime: str, encoder: TermEncoder) -> None:
    """Keep the encoder an index was just built with, so that its searches reuse it."""
    with _lock:
        _encoders[encoder_key(index, runtime)] = encoder


def search_space(
    index: IndexLike = None,
    runtime: str = "torch",
    threads: int | None = None,
    model: str | Path | None = None,
) -> SearchSpace:
    """The (cached) :class:`SearchSpace` of ``index`` (a loaded index, a folder, ``None``: the
    default index) with its own encoder run by ``runtime``; ``model``: the encoder folder
    when it moved since the build (its fingerprint must match the card's)."""
    resolved = resolve_index(index)
    with _lock:
        per_runtime = _spaces.setdefault(resolved, {})
        if runtime not in per_runtime:
            key = encoder_key(resolved, runtime)
            if key not in _encoders:
                encoder = resolved.load_encoder(model)
                encoder.set_runtime(runtime, threads=threads)
                _encoders[key] = encoder
            per_runtime[runtime] = SearchSpace(resolved, _encoders[key])
        return per_runtime[runtime]


def with_synonyms(
    space: SearchSpace,
    synonyms: SynonymSources,
    format: str | None = None,
    notice: SynonymNotice | None = None,
) -> SearchSpace:
    """``space`` plus ``synonyms`` (files, or ``(concept_id, text)`` pairs); the space of a set
    of files is cached until a file changes (pairs are encoded on every call). ``notice`` is
    told about each source when it is encoded."""
    from termnorm.mentions.synonyms import as_sources

    sources = as_sources(synonyms)
    if not all(isinstance(s, Path) for s in sources):
        return _add(space, synonyms, format, notice)
    files = [Path(str(s)).resolve() for s in sources]
    key = f"synonyms {format} {id(space)} " + " ".join(f"{p}@{p.stat().st_mtime_ns}" for p in files)
    with _lock:
        cache = _spaces.setdefault(space.index, {})
        if key not in cache:
            cache[key] = _add(space, [Path(str(s)) for s in sources], format, notice)
        return cache[key]


def _add(
    space: SearchSpace, sources: SynonymSources, format: str | None, notice: SynonymNotice | None
) -> SearchSpace:
    space, reports = add_synonym_sources(space, sources, format)
    for name, report in reports:
        logger.info("domain synonyms from %s: %s", name, report.to_dict())
        if notice is not None:
            notice(name, report)
    return space


def build(
    spec: PipelineSpec,
    index: TermIndex | SearchSpace | None = None,
    *,
    ranker: Ranker | None = None,
    synonyms: SynonymSources | None = None,
    notice: SynonymNotice | None = None,
) -> RowMatcher:
    """The matcher ``spec`` describes (module doc), cached per spec.

    ``index``: an already loaded index or search space (the service's, a project's, an
    in-memory index) instead of ``spec.index``; ``ranker``: a loaded ranker instead of
    ``spec.ranker``; ``synonyms``: domain synonyms beyond ``spec.synonyms`` (e.g.
    ``(concept_id, text)`` pairs). A matcher over a given space or extra synonyms is not
    cached (its caller keeps what it reuses: the service's LRU). Raises ``ValueError`` for
    settings that cannot go together, :class:`~termnorm.errors.ArtifactMismatchError` for a
    card or ranker made on another index.
    """
    if isinstance(index, SearchSpace):
        space = index
    else:
        where = index if index is not None else spec.index
        space = search_space(where, spec.runtime.value, spec.threads, spec.model)
    if spec.synonyms:
        space = with_synonyms(space, list(spec.synonyms), notice=notice)
    if synonyms is not None:
        space = with_synonyms(space, synonyms, notice=notice)
    if ranker is None and spec.ranker is not None:
        ranker = load_ranker(spec.ranker, spec.threads)  # cached per card version
    if isinstance(index, SearchSpace) or synonyms is not None:  # the caller's space: its cache
        return _assemble(spec, space, ranker)
    key = (spec, id(space), id(ranker), *(_version(p) for p in stage_paths(spec)))
    with _lock:
        cache = _matchers.setdefault(space.index, {})
        if key not in cache:
            cache[key] = _assemble(spec, space, ranker)
        return cache[key]


def _spec_error(field: str, exc: Exception) -> SpecError:
    """``exc`` as a :class:`SpecError` naming ``field``, of the same kind (empty or not)."""
    kind = EmptySpecError if isinstance(exc, EmptyResultError) else SpecError
    return kind(field, str(exc))


def _assemble(spec: PipelineSpec, space: SearchSpace, ranker: Ranker | None) -> RowMatcher:
    """Recall, then the learned stages ``spec`` switches on (module doc); ``ranker``: a loaded
    ranker instead of ``spec.ranker``'s folder."""
    loaded = {"ranker": ranker} if ranker is not None else None
    return apply_stages(spec, recall_stage(spec, space, ranker), space, loaded)


def recall_stage(
    spec: PipelineSpec, space: SearchSpace, ranker: Ranker | None = None
) -> SpaceMatcher:
    """The recall matcher of ``spec`` over ``space``: the strategy of :func:`resolve_strategy`
    (the plain normalizer of ``spec.mode`` when none is named and ``space`` holds no domain
    synonyms),
    configured by ``max_chars``, ``min_score`` (a cosine; none when it is a probability),
    ``namespaces``, ``semantic_types`` and ``excluded_types``; :class:`SpecError` naming the field that this space
    cannot serve."""
    try:
        if spec.strategy is None and space.domain is None:
            mode = SearchMode(spec.mode)
            recall = SpaceMatcher(space, SearchConfig(mode.strategy), name=mode.matcher_name)
        else:
            recall = build_strategy(space, resolve_strategy(spec, space), spec.sieve_threshold)
    except (ValueError, EmptyResultError) as exc:
        raise _spec_error("strategy", exc) from exc
    recall = recall.configure(
        max_chars=spec.max_chars,
        min_score=None if loading.min_score_is_probability(spec, ranker) else spec.min_score,
    )
    for field in ("namespaces", "semantic_types", "excluded_types"):
        if value := getattr(spec, field):
            try:
                recall = recall.configure(**{field: value})
            except (ValueError, EmptyResultError) as exc:
                raise _spec_error(field, exc) from exc
    return recall


def fit_recall(spec: PipelineSpec, space: SearchSpace, stage: str) -> RowMatcher:
    """What the learned stage named ``stage`` is fitted on: ``spec``'s recall over ``space``
    (a cross-fitting fold's space, its domain synonyms the caller's) followed by the stages
    before ``stage`` that ``spec`` switches on, as :func:`build` assembles them."""
    return apply_stages(spec, recall_stage(spec, space), space, until=stage)
