"""Query → ranked concepts: one search space, one matcher, strategies, sieves and baselines.

Names resolve lazily, so importing a light submodule (``termnorm.search.defaults`` for the
CLI) does not load numpy, pandas or the index.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from termnorm._lazy import lazy_getattr

__all__ = [
    "DEFAULT_SIEVE_THRESHOLD",
    "PAPER_STRATEGIES",
    "Candidate",
    "ConceptFilter",
    "ContextMatcher",
    "ExpansionChoice",
    "ExpansionRule",
    "Matcher",
    "Normalizer",
    "QueryError",
    "RowMatcher",
    "RowResult",
    "SearchConfig",
    "SearchMode",
    "SearchSpace",
    "Source",
    "SpaceMatcher",
    "StrategySpec",
    "Target",
    "build_strategy",
    "parse_strategy",
    "validate_query",
]

_MODULES = {
    "candidate": ("Candidate", "Matcher", "RowMatcher", "RowResult", "Source"),
    "context": ("ContextMatcher", "ExpansionChoice", "ExpansionRule"),
    "defaults": ("DEFAULT_SIEVE_THRESHOLD",),
    "domain": ("SearchSpace",),
    "filters": ("ConceptFilter",),
    "space_matcher": ("SearchConfig", "SpaceMatcher", "build_strategy"),
    "normalizer": ("Normalizer",),
    "query": ("QueryError", "validate_query"),
    "strategies": ("PAPER_STRATEGIES", "SearchMode", "StrategySpec", "Target", "parse_strategy"),
}

if TYPE_CHECKING:  # pragma: no cover
    from termnorm.search.candidate import Candidate, Matcher, RowMatcher, RowResult, Source
    from termnorm.search.context import ContextMatcher, ExpansionChoice, ExpansionRule
    from termnorm.search.defaults import DEFAULT_SIEVE_THRESHOLD
    from termnorm.search.domain import SearchSpace
    from termnorm.search.filters import ConceptFilter
    from termnorm.search.normalizer import Normalizer
    from termnorm.search.query import QueryError, validate_query
    from termnorm.search.space_matcher import SearchConfig, SpaceMatcher, build_strategy
    from termnorm.search.strategies import (
        PAPER_STRATEGIES,
        SearchMode,
        StrategySpec,
        Target,
        parse_strategy,
    )

__getattr__ = lazy_getattr(__name__, {n: m for m, names in _MODULES.items() for n in names})
