"""Search modules O-T, O-C, D-T, D-C, OD-T, OD-C, sieves, and the parsing of their names.

A *module* (Xu & Bethard 2021, table 1) is a search target (O ontology terms, D domain
synonyms, OD both; see :mod:`termnorm.search.domain`) and a representation (T: every text its
own vector, eq. 7; C: one mean vector per concept, eq. 8). A *strategy* is a module or a sieve
``first+second`` of two modules (:mod:`termnorm.search.sieve`). Names are case-insensitive and
written ``o-t``, ``od-c``, ``d-t+od-t``; :data:`PAPER_STRATEGIES` lists the paper's 14 in the
order of its table 4 (6 modules, then the 8 sieves of its table 2).

The plain normalizer is O-T (:attr:`SearchMode.TERM`) or O-C (:attr:`SearchMode.CONCEPT`).
Every strategy is searched by the one matcher, :class:`~termnorm.search.SpaceMatcher`.
This module imports nothing heavy.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

__all__ = [
    "MODULES",
    "PAPER_SIEVES",
    "PAPER_STRATEGIES",
    "ModuleSpec",
    "Representation",
    "SearchMode",
    "StrategySpec",
    "Target",
    "parse_strategy",
]

_HELP = "expected MODULE or FIRST+SECOND with MODULE = o-t, o-c, d-t, d-c, od-t or od-c"


class Target(str, Enum):
    """What a search module searches over."""

    O = "o"  # noqa: E741 - the paper's name: ontology terms (the index)
    D = "d"  # domain synonyms (training mentions, a user's file)
    OD = "od"  # both


class Representation(str, Enum):
    """How a target is represented: each text (T) or each concept's mean vector (C)."""

    T = "t"
    C = "c"


@dataclass(frozen=True)
class ModuleSpec:
    """A search module: target × representation."""

    target: Target
    representation: Representation

    def __str__(self) -> str:
        return f"{self.target.value}-{self.representation.value}"


@dataclass(frozen=True)
class StrategySpec:
    """One module, or a sieve: ``first``, then ``second`` when ``first`` is not confident."""

    first: ModuleSpec
    second: ModuleSpec | None = None

    @property
    def is_sieve(self) -> bool:
        """Whether this is a two-module sieve."""
        return self.second is not None

    @property
    def modules(self) -> tuple[ModuleSpec, ...]:
        """The module, or the sieve's two modules in order."""
        return (self.first,) if self.second is None else (self.first, self.second)

    @property
    def needs_domain(self) -> bool:
        """Whether any module searches domain synonyms (D or OD)."""
        return any(m.target is not Target.O for m in self.modules)

    def __str__(self) -> str:
        return "+".join(str(m) for m in self.modules)


def _parse_module(part: str, whole: str) -> ModuleSpec:
    target, sep, rep = part.rpartition("-")
    try:
        if not sep:
            raise ValueError
        return ModuleSpec(Target(target), Representation(rep))
    except ValueError:
        raise ValueError(f"unknown search module {part!r} in strategy {whole!r}: {_HELP}") from None


def parse_strategy(text: str | StrategySpec) -> StrategySpec:
    """``"o-t"`` → O-T; ``"D-T + OD-T"`` → sieve D-T then OD-T. Bad names raise ``ValueError``."""
    if isinstance(text, StrategySpec):
        return text
    whole = "".join(str(text).split()).lower()
    if not whole:
        raise ValueError(f"empty search strategy: {_HELP}")
    parts = whole.split("+")
    if len(parts) > 2:
        raise ValueError(
            f"a sieve has two modules (first+second), got {len(parts)} in {text!r}: {_HELP}"
        )
    modules = [_parse_module(p, str(text)) for p in parts]
    if len(modules) == 2 and modules[0] == modules[1]:
        raise ValueError(f"sieve {text!r} uses the same module twice: {_HELP}")
    return StrategySpec(modules[0], modules[1] if len(modules) == 2 else None)


class SearchMode(str, Enum):
    """The plain normalizer's vectors: terms (O-T) or concept means (O-C)."""

    TERM = "term"
    CONCEPT = "concept"

    @property
    def strategy(self) -> StrategySpec:
        """The module this mode searches."""
        rep = Representation.T if self is SearchMode.TERM else Representation.C
        return StrategySpec(ModuleSpec(Target.O, rep))

    @property
    def matcher_name(self) -> str:
        """Name of the plain normalizer in this mode (``embedding-term``)."""
        return f"embedding-{self.value}"


MODULES: tuple[StrategySpec, ...] = tuple(
    parse_strategy(s) for s in ("o-t", "o-c", "d-t", "d-c", "od-t", "od-c")
)
PAPER_SIEVES: tuple[StrategySpec, ...] = tuple(
    parse_strategy(f"{first}+{second}")
    for second_target in ("o", "od")
    for first in ("d-t", "d-c")
    for second in (f"{second_target}-t", f"{second_target}-c")
)
PAPER_STRATEGIES: tuple[StrategySpec, ...] = MODULES + PAPER_SIEVES
