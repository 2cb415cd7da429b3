"""Defaults of the search layer, in a module that imports nothing.

The CLI reads them while it registers its commands, before any search code is loaded, so
they live here once and every other module (the sieve, the API, the CLI) imports them.
"""

__all__ = ["DEFAULT_SIEVE_THRESHOLD", "DEFAULT_WITH_SYNONYMS"]

DEFAULT_SIEVE_THRESHOLD = 0.95
"""Cosine at or above which a sieve takes its first module's answer (Xu & Bethard 2021)."""

DEFAULT_WITH_SYNONYMS = "d-t+od-t"
"""The strategy used when domain synonyms are given without naming a strategy."""
