"""Query → ranked concepts: the normalizer, search strategies, sieves and baselines."""

from termnorm.search.candidate import Candidate, Matcher
from termnorm.search.domain import SearchSpace, Target
from termnorm.search.normalizer import Normalizer, RowResult, SearchMode
from termnorm.search.query import QueryError, validate_query
from termnorm.search.sieve import DEFAULT_SIEVE_THRESHOLD, Sieve, build_strategy
from termnorm.search.strategies import PAPER_STRATEGIES, SearchModule, parse_strategy

__all__ = [
    "DEFAULT_SIEVE_THRESHOLD",
    "PAPER_STRATEGIES",
    "Candidate",
    "Matcher",
    "Normalizer",
    "QueryError",
    "RowResult",
    "SearchMode",
    "SearchModule",
    "SearchSpace",
    "Sieve",
    "Target",
    "build_strategy",
    "parse_strategy",
    "validate_query",
]
