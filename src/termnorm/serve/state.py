"""What the running service holds: the search space (index, encoder, domain synonyms) and
its matchers, loaded once, and swapped whole when synonyms are added.

:func:`load_space` does the start-up work (read the index, load its encoder, add the
synonyms of the store file). :class:`ServiceState` then answers from the current space;
:meth:`ServiceState.add_synonyms` builds the next space (only the new texts encoded, the
index untouched), appends the pairs to the store, and swaps it in.

With ``--ranker``, :func:`load_ranking` loads the ranker (refused when it was trained on
another index) and, when one can be found, the implication predictor that ``"multi": true``
requests need (:func:`~termnorm.search.rank.implication.resolve_implication`); a request
asking for ``multi`` without them is answered 422 naming the field.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from termnorm.search.defaults import default_strategy
from termnorm.search.domain import SearchSpace, SynonymReport, add_synonym_sources
from termnorm.search.matcher import SpaceMatcher, build_strategy
from termnorm.serve.errors import ApiError
from termnorm.serve.settings import ServeSettings
from termnorm.serve.synonym_store import StoreContents, append_synonym_store, read_synonym_store

if TYPE_CHECKING:
    from termnorm.search.rank.implication import ImplicationLike
    from termnorm.search.rank.matcher import RankedMatcher
    from termnorm.search.rank.ranker import Ranker
    from termnorm.serve.batching import MicroBatcher

__all__ = ["Ranking", "Runtime", "ServiceState", "load_ranking", "load_space"]

logger = logging.getLogger(__name__)

_MATCHERS_KEPT = 64


@dataclass
class Runtime:
    """What the app's lifespan sets up (``app.state.runtime``): the loaded state, or why
    loading failed, and the micro-batcher."""

    state: ServiceState | None = None
    error: str | None = None
    batcher: MicroBatcher | None = None


def load_space(settings: ServeSettings) -> tuple[SearchSpace, StoreContents]:
    """The index of ``settings`` with its encoder, plus the synonyms of the read-only synonym
    files and of the store file (and what was read from the store: the pairs, a torn last
    line skipped), with what searches build on first use built now
    (:meth:`SearchSpace.prepare`): concurrent first requests must not each build it."""
    from termnorm.api import load_index, search_space

    if settings.model is not None:
        if settings.index is None:
            raise ValueError("--model needs --index (the default index brings its own model)")
        index = load_index(settings.index)
        space = SearchSpace(index, index.load_encoder(settings.model))
    else:
        space = search_space(settings.index)
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


@dataclass(frozen=True)
class Ranking:
    """The loaded ranker, and the implication predictor or why there is none."""

    ranker: Ranker
    k_c: int
    implication: ImplicationLike | None
    no_implication: str | None = None


def load_ranking(settings: ServeSettings, space: SearchSpace) -> Ranking | None:
    """The ranker of ``settings`` checked against the space's index (``None`` without one)."""
    if settings.ranker is None:
        return None
    from termnorm.errors import ArtifactMismatchError
    from termnorm.search.rank.implication import resolve_implication
    from termnorm.search.rank.ranker import load_ranker

    ranker = load_ranker(settings.ranker)
    ranker.check_index(space.index)
    model_path = space.index.card.get("model", {}).get("path")
    try:
        implication = resolve_implication(
            Path(model_path) if model_path else None, settings.implication
        )
    except ArtifactMismatchError as exc:
        logger.info("multi-code answers are off: %s", exc)
        return Ranking(ranker, settings.k_c, None, str(exc))
    return Ranking(ranker, settings.k_c, implication)


@dataclass(frozen=True)
class _Options:
    strategy: str
    min_score: float | None
    namespaces: tuple[str, ...] | None
    semantic_types: tuple[str, ...] | None


class ServiceState:
    """The loaded space and a small cache of configured matchers over it."""

    def __init__(
        self,
        settings: ServeSettings,
        space: SearchSpace,
        ranking: Ranking | None = None,
        synonyms_skipped: int = 0,
    ) -> None:
        self.settings = settings
        self.space = space
        self.ranking = ranking
        self.synonyms_skipped = synonyms_skipped  # torn store lines skipped at start
        self._matchers: OrderedDict[_Options, SpaceMatcher] = OrderedDict()
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ reading
    def info(self) -> dict[str, Any]:
        """What is served, for ``/v1/ready``: the index and model by name (their folder's
        last part), never by absolute path, which anonymous clients have no need of."""
        index = self.space.index
        model = index.card.get("model", {})
        return {
            "index": index.path.name if index.path is not None else None,
            "concepts": len(index.concepts),
            "terms": len(index.terms),
            "model": str(model.get("name") or Path(str(model.get("path") or "")).name),
            "domain_synonyms": self.domain_size(),
            "strategy": self.default_strategy(),
            "synonyms_skipped": self.synonyms_skipped,
        }

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

    def matcher(
        self,
        strategy: str | None,
        min_score: float | None,
        namespaces: Sequence[str] | None,
        semantic_types: Sequence[str] | None,
    ) -> SpaceMatcher:
        """The matcher for these options over the current space (``strategy`` ``None``:
        :meth:`default_strategy`); :class:`~termnorm.serve.errors.ApiError` (422) naming the field that is not usable
        (unknown strategy, namespace or type, a D target without domain synonyms)."""
        if strategy is None:
            strategy = self.default_strategy()
        key = _Options(
            strategy.strip().lower(),
            min_score,
            None if namespaces is None else tuple(namespaces),
            None if semantic_types is None else tuple(semantic_types),
        )
        with self._lock:
            space = self.space
            cached = self._matchers.get(key)
            if cached is not None and cached.space is space:
                self._matchers.move_to_end(key)
                return cached
        matcher = self._build(space, key)
        with self._lock:
            if self.space is space:
                self._matchers[key] = matcher
                while len(self._matchers) > _MATCHERS_KEPT:
                    self._matchers.popitem(last=False)
        return matcher

    @property
    def ranks_by_probability(self) -> bool:
        """Whether the loaded ranker orders by its learned combiner's probability."""
        return self.ranking is not None and self.ranking.ranker.combiner is not None

    def ranked(
        self, recall: SpaceMatcher, multi: bool, min_probability: float | None = None
    ) -> RankedMatcher | None:
        """``recall`` followed by the loaded ranker (``None`` without one); ``multi`` adds the
        implication predictor, ``min_probability`` the learned mode's threshold.
        :class:`~termnorm.serve.errors.ApiError` (422) on ``multi`` when it cannot be served."""
        ranking = self.ranking
        if ranking is None:
            if multi:
                raise ApiError(
                    422,
                    ["body", "multi"],
                    "multi-code answers need a ranker: start the service with --ranker RANKER",
                    "value_error",
                )
            return None
        if multi and ranking.implication is None:
            raise ApiError(
                422,
                ["body", "multi"],
                ranking.no_implication or "no implication head",
                "value_error",
            )
        from termnorm.search.rank.matcher import RankedMatcher

        return RankedMatcher(
            recall,
            ranking.ranker,
            k_c=ranking.k_c,
            implication=ranking.implication if multi else None,
            min_probability=min_probability,
        )

    def _build(self, space: SearchSpace, key: _Options) -> SpaceMatcher:
        from termnorm.errors import EmptyResultError

        try:
            matcher = build_strategy(space, key.strategy)
        except (ValueError, EmptyResultError) as exc:
            raise ApiError(422, ["body", "strategy"], str(exc), "value_error") from None
        matcher = matcher.configure(max_chars=self.settings.max_chars, min_score=key.min_score)
        try:
            if key.namespaces is not None:
                field = "namespaces"
                matcher = matcher.configure(namespaces=key.namespaces)
            if key.semantic_types is not None:
                field = "semantic_types"
                matcher = matcher.configure(semantic_types=key.semantic_types)
        except (ValueError, EmptyResultError) as exc:
            raise ApiError(422, ["body", field], str(exc), "value_error") from None
        return matcher

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
