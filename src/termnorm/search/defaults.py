"""Defaults of the search layer, in a module that imports nothing.

The CLI reads them while it registers its commands, before any search code is loaded, so
they live here once and every other module (the sieve, the API, the CLI) imports them.
"""

__all__ = [
    "DEFAULT_SIEVE_THRESHOLD",
    "DEFAULT_STRATEGY",
    "DEFAULT_WITH_SYNONYMS",
    "default_strategy",
]

DEFAULT_SIEVE_THRESHOLD = 0.95
"""Cosine at or above which a sieve takes its first module's answer (Xu & Bethard 2021)."""

DEFAULT_WITH_SYNONYMS = "d-t+od-t"
"""The strategy used when domain synonyms are given without naming a strategy."""

DEFAULT_STRATEGY = "o-t"
"""The strategy used without domain synonyms: the ontology's term vectors."""


def default_strategy(with_synonyms: bool) -> str:
    """The strategy searched when none is named: :data:`DEFAULT_WITH_SYNONYMS` when domain
    synonyms are given (so they are used), else :data:`DEFAULT_STRATEGY`. The one rule of
    the CLI, the ranker's training and the service."""
    return DEFAULT_WITH_SYNONYMS if with_synonyms else DEFAULT_STRATEGY
