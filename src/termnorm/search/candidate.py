"""What every matcher returns, and the protocol evaluators rely on.

A *matcher* is anything that maps query strings to ranked concepts: the embedding
normalizer, a search strategy or sieve, or a lexical baseline (exact match, TF-IDF, edit
distance). Evaluators only see this protocol, so all of them compare side by side.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple, Protocol, runtime_checkable


class Candidate(NamedTuple):
    """One ranked concept for a query (rank starts at 1)."""

    concept_id: str
    name: str
    score: float
    matched_term: str
    rank: int


@runtime_checkable
class Matcher(Protocol):
    """Maps queries to at most ``k`` distinct concepts each, best first."""

    name: str

    def normalize_batch(self, texts: Sequence[str], k: int = 5) -> list[list[Candidate]]:
        """Top-``k`` concepts per text; a concept appears once, at its best term."""
        ...

    def alt_ids(self, concept_id: str) -> Sequence[str]:
        """Other IDs of a concept (xrefs, merged IDs), used to match gold labels."""
        ...
