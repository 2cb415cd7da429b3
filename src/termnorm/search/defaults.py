"""Defaults of the search layer, in a module that imports nothing.

The CLI reads them while it registers its commands, before any search code is loaded, so
they live here once and every other module (the sieve, the API, the CLI) imports them.
:func:`resolve_strategy` is the one rule for the strategy searched when none is named;
:func:`termnorm.search.build.build` applies it (and re-exports it).
"""

from __future__ import annotations

from typing import Protocol

__all__ = [
    "DEFAULT_SIEVE_THRESHOLD",
    "DEFAULT_STRATEGY",
    "DEFAULT_WITH_SYNONYMS",
    "StrategyChoice",
    "default_strategy",
    "resolve_strategy",
]

DEFAULT_SIEVE_THRESHOLD = 0.95
"""Cosine at or above which a sieve takes its first module's answer (Xu & Bethard 2021)."""

DEFAULT_WITH_SYNONYMS = "d-t+od-t"
"""The strategy used when domain synonyms are given without naming a strategy."""

DEFAULT_STRATEGY = "o-t"
"""The strategy used without domain synonyms: the ontology's term vectors."""


def default_strategy(with_synonyms: bool, mode: str = "term") -> str:
    """:func:`resolve_strategy`'s rule on its inputs: :data:`DEFAULT_WITH_SYNONYMS` with
    domain synonyms, else the plain normalizer's module of ``mode`` (``o-t``, ``o-c``)."""
    if with_synonyms:
        return DEFAULT_WITH_SYNONYMS
    if mode not in _MODE_MODULES:
        raise ValueError(f"mode must be term or concept, got {mode!r}")
    return _MODE_MODULES[mode]


_MODE_MODULES = {"term": DEFAULT_STRATEGY, "concept": "o-c"}


class StrategyChoice(Protocol):
    """What names a strategy: a :class:`~termnorm.search.spec.PipelineSpec`, a learned stage's
    :class:`~termnorm.search.stages.fit_spec.TrainingDataSpec`, a project's settings."""

    @property
    def strategy(self) -> str | None:
        """The strategy named, ``None`` for the default."""

    @property
    def synonyms(self) -> tuple[object, ...] | list[object]:
        """Domain synonym files searched."""


class HasDomain(Protocol):
    """A search space: whether it holds domain synonyms (``domain`` not ``None``)."""

    @property
    def domain(self) -> object | None:
        """The space's domain synonyms."""


def resolve_strategy(spec: StrategyChoice, space: HasDomain | None = None) -> str:
    """The strategy ``spec`` searches over ``space``: ``spec.strategy`` when it names one;
    else :data:`DEFAULT_WITH_SYNONYMS` when there are domain synonyms (``spec.synonyms``, or
    ``space`` holds some), so that they are used; else the module of ``spec.mode`` (``o-t``
    for ``term``, ``o-c`` for ``concept``; ``o-t`` for a spec without a mode)."""
    if spec.strategy:
        return spec.strategy
    with_domain = bool(spec.synonyms) or (space is not None and space.domain is not None)
    return default_strategy(with_domain, getattr(spec, "mode", "term"))
