"""Sieve-based search: trust the first module when it is confident, else ask the second.

Xu & Bethard 2021, section 3.2.1 and 4.2: the first sieve searches the domain synonyms (D-T
or D-C); when the cosine of its best answer is ≥ 0.95 (:data:`DEFAULT_SIEVE_THRESHOLD`,
configurable) that answer is taken, otherwise the second module's (O-T, O-C, OD-T or OD-C).

Beyond the top-1, which is all the paper defines: when the first sieve is trusted, the ranking
is its answers at or above the threshold followed by the second module's ranking (concepts
already listed skipped), re-numbered and cut at ``k``; otherwise it is the second module's
ranking unchanged. Queries are encoded once for both modules.
"""

from __future__ import annotations

import numpy as np

from termnorm.search.candidate import Candidate
from termnorm.search.domain import SearchSpace
from termnorm.search.strategies import (
    SearchModule,
    StrategySpec,
    VectorMatcher,
    parse_strategy,
)

__all__ = ["DEFAULT_SIEVE_THRESHOLD", "Sieve", "build_strategy", "sieve_merge"]

DEFAULT_SIEVE_THRESHOLD = 0.95


def sieve_merge(
    first: list[Candidate], second: list[Candidate], threshold: float, k: int
) -> list[Candidate]:
    """One query's sieve ranking from the two modules' rankings (see the module docstring)."""
    if not first or first[0].score < threshold:
        return second[:k]
    kept = [c for c in first if c.score >= threshold]
    listed = {c.concept_id for c in kept}
    merged = kept + [c for c in second if c.concept_id not in listed]
    return [c._replace(rank=i) for i, c in enumerate(merged[:k], start=1)]


class Sieve(VectorMatcher):
    """``first`` when its best cosine ≥ ``threshold``, else ``second``."""

    def __init__(
        self,
        first: SearchModule,
        second: SearchModule,
        threshold: float = DEFAULT_SIEVE_THRESHOLD,
    ) -> None:
        if first.space is not second.space:
            raise ValueError("both modules of a sieve must search the same space")
        super().__init__(first.space)
        self.first = first
        self.second = second
        self.threshold = float(threshold)
        self.name = f"{first.name}+{second.name}"

    def search_vectors(self, queries: np.ndarray, k: int) -> list[list[Candidate]]:
        a = self.first.search_vectors(queries, k)
        b = self.second.search_vectors(queries, k)
        return [sieve_merge(x, y, self.threshold, k) for x, y in zip(a, b, strict=True)]


def build_strategy(
    space: SearchSpace,
    strategy: str | StrategySpec,
    threshold: float = DEFAULT_SIEVE_THRESHOLD,
) -> VectorMatcher:
    """The matcher for ``strategy`` (a name such as ``"d-t+od-t"`` or a parsed spec)."""
    spec = parse_strategy(strategy)
    first = SearchModule(space, spec.first)
    if spec.second is None:
        return first
    return Sieve(first, SearchModule(space, spec.second), threshold)
