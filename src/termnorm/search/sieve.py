"""Sieve-based search: trust the first module when it is confident, else ask the second.

Xu & Bethard 2021, section 3.2.1 and 4.2: the first sieve searches the domain synonyms (D-T
or D-C); when the cosine of its best answer is ≥ 0.95
(:data:`~termnorm.search.defaults.DEFAULT_SIEVE_THRESHOLD`, configurable) that answer is
taken, otherwise the second module's (O-T, O-C, OD-T or OD-C).

Beyond the top-1, which is all the paper defines: when the first sieve is trusted, the ranking
is its answers at or above the threshold followed by the second module's ranking (concepts
already listed skipped), re-numbered and cut at ``k``; otherwise it is the second module's
ranking unchanged. A sieve is a configuration of the one matcher
(:class:`~termnorm.search.SpaceMatcher`), which encodes the queries once for both modules and
merges their rankings with :func:`sieve_merge`.
"""

from __future__ import annotations

from termnorm.search.candidate import Candidate

__all__ = ["sieve_merge"]


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
