"""What every matcher returns, and the protocol evaluators rely on.

A *matcher* is anything that maps query strings to ranked concepts: the embedding
normalizer, a search strategy or sieve, or a lexical baseline (exact match, TF-IDF, edit
distance). Evaluators only see this protocol, so all of them compare side by side.

Ties between concepts follow one rule in every embedding matcher (:func:`rank_key`), the
one the lexical dictionary applies too: scores compared rounded to :data:`TIE_DECIMALS`
decimals, then the concept matched at its own name first, then the smaller ``concept_id``.
A text shared by several concepts is typically one concept's name and another's synonym
(MEDIC: "Aniridia" names MeSH D015783 and is a synonym of "Aniridia, type 2", C536372), and
the concept it names is the better guess; the ID order only makes the rest deterministic.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple, Protocol, runtime_checkable

TIE_DECIMALS = 6
"""Scores equal to this many decimals tie (a string encoded in two batches can differ in
the last bits of float32)."""


def rank_key(score: float, at_name: bool, concept_id: str) -> tuple[float, bool, str]:
    """Sort key of a concept scored ``score``, matched at its name or not: best first."""
    return (-round(score, TIE_DECIMALS), not at_name, concept_id)


def is_name(text: str, name: str) -> bool:
    """Whether a matched ``text`` is the concept's ``name`` (case-insensitive)."""
    return text.casefold() == name.casefold()


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
