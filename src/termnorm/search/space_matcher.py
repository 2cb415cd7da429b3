"""The one matcher: every search strategy is a configuration of :class:`SpaceMatcher`.

A :class:`SpaceMatcher` searches a :class:`~termnorm.search.SearchSpace` as its
:class:`SearchConfig` says: a module (O-T, O-C, D-T, D-C, OD-T, OD-C) or a sieve of two
(:mod:`termnorm.search.sieve`), an optional ``min_score`` and an optional
:class:`~termnorm.search.filters.ConceptFilter`. The plain normalizer is its O-T or O-C
configuration (:class:`~termnorm.search.Normalizer`).

Contract (a :class:`~termnorm.search.candidate.RowMatcher`): queries are validated
(:mod:`termnorm.search.query`) and encoded once whatever the strategy; ``normalize_batch``
raises :class:`QueryError` for the first bad row, ``normalize_rows`` puts the message in the
row's ``error``. Each module's hits are ranked by
:func:`~termnorm.search.top_concepts.rank_parts` (a concept once, the tie rule, filters
applied while ranking); a filter leaving at most :data:`RESTRICT_FRACTION` of a part's rows
is answered by an exact search over those rows. Candidates below ``min_score`` are dropped
(a valid query left without any says so in ``abstained``). :meth:`SpaceMatcher.configure`
changes settings cheaply (nothing is re-encoded or rebuilt).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from termnorm.encoders.language_coverage import warn_language_once
from termnorm.index.term_index import TermIndex
from termnorm.search.candidate import Candidate, RowAnswers, RowResult
from termnorm.search.defaults import DEFAULT_SIEVE_THRESHOLD
from termnorm.search.domain import QueryEncoder, SearchSpace
from termnorm.search.filters import ConceptFilter
from termnorm.search.identity import canonical, index_identity, matcher_model
from termnorm.search.parts import Part, Restricted
from termnorm.search.query import DEFAULT_MAX_CHARS, query_problem
from termnorm.search.sieve import sieve_merge
from termnorm.search.strategies import ModuleSpec, SearchMode, StrategySpec, parse_strategy
from termnorm.search.top_concepts import rank_parts

__all__ = [
    "RESTRICT_FRACTION",
    "SearchConfig",
    "SpaceMatcher",
    "abstain",
    "abstained",
    "build_strategy",
]

RESTRICT_FRACTION = 0.25
"""A filter leaving at most this share of a part's rows is searched exactly on those rows."""


@dataclass(frozen=True)
class SearchConfig:
    """What a :class:`SpaceMatcher` searches and how it answers.

    ``strategy``: a module or a sieve; ``threshold``: the sieve's confidence cosine;
    ``min_score``: abstain below it (``None``: never); ``filter``: namespaces and semantic
    types to keep; ``max_chars``: the longest accepted query.
    """

    strategy: StrategySpec = field(default_factory=lambda: SearchMode.TERM.strategy)
    threshold: float = DEFAULT_SIEVE_THRESHOLD
    min_score: float | None = None
    filter: ConceptFilter = field(default_factory=ConceptFilter)
    max_chars: int = DEFAULT_MAX_CHARS

    def __post_init__(self) -> None:
        """Scores are cosines: a threshold outside [-1, 1] would never (or always) apply."""
        for name in ("threshold", "min_score"):
            value = getattr(self, name)
            if value is not None and not -1.0 <= value <= 1.0:
                raise ValueError(f"{name} is a cosine and must be in [-1, 1], got {value}")
        if self.max_chars < 1:
            raise ValueError(f"max_chars must be at least 1, got {self.max_chars}")


def abstain(candidates: list[Candidate], min_score: float | None) -> list[Candidate]:
    """``candidates`` scoring at least ``min_score``, ranks renumbered from 1."""
    if min_score is None:
        return candidates
    kept = [c for c in candidates if c.score >= min_score]
    if len(kept) == len(candidates):
        return candidates
    return [c._replace(rank=i) for i, c in enumerate(kept, start=1)]


def abstained(
    candidates: list[Candidate], min_score: float | None, what: str = "scored"
) -> RowResult:
    """The row of ``candidates`` scoring at least ``min_score`` (:func:`abstain`), or, when
    none does, the row that abstains saying so (``"no concept scored >= 0.8"``; ``what``:
    ``"has probability"`` for the learned stages)."""
    kept = abstain(candidates, min_score)
    if kept or min_score is None:
        return RowResult(kept)
    return RowResult([], abstained=f"no concept {what} >= {min_score:g}")


class SpaceMatcher(RowAnswers):
    """Top-``k`` concepts for query texts from a :class:`SearchSpace`; see the module doc."""

    def __init__(
        self,
        space: SearchSpace,
        config: SearchConfig | None = None,
        name: str | None = None,
        batch_size: int = 256,
    ) -> None:
        self.space = space
        self.config = config or SearchConfig()
        for module in self.config.strategy.modules:
            space.require(module.target)
        self.name = name or str(self.config.strategy)
        self.batch_size = batch_size
        self._allowed = space.allowed(self.config.filter)  # checked here
        self._parts: dict[ModuleSpec, list[Part]] = {}

    @property
    def index(self) -> TermIndex:
        """The ontology index searched."""
        return self.space.index

    @property
    def encoder(self) -> QueryEncoder:
        """The query encoder."""
        return self.space.encoder

    @property
    def max_chars(self) -> int:
        """The longest accepted query."""
        return self.config.max_chars

    def configure(
        self,
        *,
        min_score: float | None = None,
        namespaces: Iterable[str] | None = None,
        semantic_types: Iterable[str] | None = None,
        excluded_types: Iterable[str] | None = None,
        threshold: float | None = None,
        max_chars: int | None = None,
    ) -> SpaceMatcher:
        """A matcher over the same space with the given settings changed (``None``: kept)."""
        config = self.config
        if min_score is not None:
            config = replace(config, min_score=float(min_score))
        asked = {"namespaces": namespaces, "semantic_types": semantic_types}
        asked["excluded_types"] = excluded_types
        if changed := {k: v for k, v in asked.items() if v is not None}:
            new = ConceptFilter.of(**changed)
            config = replace(
                config, filter=replace(config.filter, **{k: getattr(new, k) for k in changed})
            )
        if threshold is not None:
            config = replace(config, threshold=float(threshold))
        if max_chars is not None:
            config = replace(config, max_chars=max_chars)
        if config == self.config:
            return self
        return SpaceMatcher(self.space, config, self.name, self.batch_size)

    def identity(self) -> dict[str, Any]:
        """What decides the answers, as JSON data: class and name, the index, the encoder's
        fingerprint and runtime, the search configuration, a digest of the domain synonyms."""
        encoder = self.encoder
        found: dict[str, Any] = {
            "class": type(self).__qualname__,
            "name": self.name,
            "index": index_identity(self.index),
            "encoder": getattr(encoder, "fingerprint", None),
            "runtime": canonical(getattr(encoder, "runtime", None)),
            "config": canonical(self.config),
        }
        if (domain := self.space.domain) is not None:
            digest = hashlib.sha256()
            for text, concept in zip(domain.texts, domain.concept_ids, strict=True):
                digest.update(f"{text}\t{concept}\n".encode())
            found["domain_synonyms"] = digest.hexdigest()
        return found

    def alt_ids(self, concept_id: str) -> tuple[str, ...]:
        """Other IDs of a concept (xrefs, merged IDs), from the index."""
        return self.space.alt_ids(concept_id)

    def normalize_rows(self, texts: Sequence[object], k: int = 5) -> list[RowResult]:
        """One :class:`RowResult` per input, in order; bad inputs carry their message. The
        first queries that look non-English to an English-only model log one warning per
        process (:mod:`termnorm.encoders.language_coverage`)."""
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        problems = [query_problem(t, self.config.max_chars) for t in texts]
        rows = [i for i, p in enumerate(problems) if p is None]
        out = [RowResult([], p) for p in problems]
        if rows:
            queries = [str(texts[i]).strip() for i in rows]
            warn_language_once(matcher_model(self), queries)
            vectors = self.encode_queries(queries)
            for row, candidates in zip(rows, self.search_vectors(vectors, k), strict=True):
                out[row] = abstained(candidates, self.config.min_score)
        return out

    def encode_queries(self, queries: list[str]) -> np.ndarray:
        """Vectors of the (checked, stripped) queries of :meth:`normalize_rows`; a subclass may
        encode them elsewhere (the service's micro-batcher)."""
        return self.space.encode_queries(queries, batch_size=self.batch_size)

    def search_vectors(self, queries: np.ndarray, k: int) -> list[list[Candidate]]:
        """Top-``k`` concepts per query vector ``[q, d]``: the module, or the sieve of two
        (:func:`~termnorm.search.sieve.sieve_merge`), then ``min_score``."""
        spec = self.config.strategy
        first = self._rank(spec.first, queries, k)
        if spec.second is not None:
            second = self._rank(spec.second, queries, k)
            first = [
                sieve_merge(a, b, self.config.threshold, k)
                for a, b in zip(first, second, strict=True)
            ]
        return [abstain(c, self.config.min_score) for c in first]

    # ------------------------------------------------------------------ internals
    def _rank(self, module: ModuleSpec, queries: np.ndarray, k: int) -> list[list[Candidate]]:
        return rank_parts(self.space.columns, self._module_parts(module), queries, k, self._allowed)

    def _module_parts(self, module: ModuleSpec) -> list[Part]:
        """The space's parts of ``module``; under a selective filter, restricted to the rows
        of the concepts that pass."""
        if module not in self._parts:
            parts = self.space.parts(module)
            if self._allowed is not None:
                parts = [self._restrict(part) for part in parts]
            self._parts[module] = parts
        return self._parts[module]

    def _restrict(self, part: Part) -> Part:
        mask = part.answerable(self._allowed)
        assert mask is not None
        rows = np.flatnonzero(mask[part.concept])
        return Restricted(part, rows) if len(rows) <= RESTRICT_FRACTION * len(part) else part


def build_strategy(
    space: SearchSpace,
    strategy: str | StrategySpec,
    threshold: float = DEFAULT_SIEVE_THRESHOLD,
) -> SpaceMatcher:
    """The matcher for ``strategy`` (a name such as ``"d-t+od-t"`` or a parsed spec)."""
    return SpaceMatcher(space, SearchConfig(parse_strategy(strategy), threshold))
