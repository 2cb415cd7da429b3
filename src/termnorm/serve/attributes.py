"""The vocabulary attributes of the concepts an answer names, from the served index.

A ``/v1/normalize`` candidate carries its concept's attributes itself
(:class:`~termnorm.search.candidate.Candidate`); the other answers name concepts that come
without them: an annotation's ranked candidates (``(concept_id, name, score)``), a review
row's candidates (stored in the project's database when the row was mapped) and a concept's
KG neighbours. :func:`with_attributes` gives each of those the attributes the served index
holds for its concept (the project's index, for a review row), so every face shows the same
ones; a concept the index lacks (a row mapped with another index) has none.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from termnorm.index import TermIndex

__all__ = ["concept_attributes", "with_attributes"]


def concept_attributes(index: TermIndex, concept_id: str) -> dict[str, str]:
    """The attributes of the concept ``concept_id`` names in ``index`` (its own ID, a bare
    or an alternative one); empty when the index has none for it or lacks the concept."""
    row = index.resolve_id(concept_id)
    if row is None:
        return {}
    found = cast("Mapping[Any, Any]", index.concepts["attributes"].iat[row])  # one dict a row
    return {str(key): str(value) for key, value in found.items()}


def with_attributes(items: Iterable[Mapping[str, Any]], index: TermIndex) -> list[dict[str, Any]]:
    """Each item (a dict naming a ``concept_id``), copied, with ``attributes`` set to its
    concept's in ``index`` (an empty dict when there are none: the schemas leave it out)."""
    return [
        {**item, "attributes": concept_attributes(index, str(item["concept_id"]))} for item in items
    ]
