"""Concepts a reviewer names by hand (``map decide --pick ID``, the review page's pick),
resolved through the project's index before anything is written.

A picked ID is the row's candidate of that very ID, or else the concept the index gives it
as ``termnorm lookup`` does (its own ID, a bare one such as ``D004244`` for
``MESH:D004244``, or an alternative ID): the decision stores the index's own ID and name.
An ID the index does not know is refused (:class:`~termnorm.errors.DecisionError`),
and so is a name sent along with the ID that is not the index's name of that concept: a
label never comes from the client.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, TypeVar

from termnorm.errors import DecisionError
from termnorm.search.spec import PipelineSpec

if TYPE_CHECKING:
    from termnorm.index import TermIndex

__all__ = [
    "AttributeLookup",
    "ConceptResolver",
    "checked_name",
    "index_attributes",
    "index_concepts",
    "project_attributes",
    "project_concepts",
]

T = TypeVar("T")

ConceptResolver = Callable[[str], tuple[str, str]]
"""``resolve(concept_id) -> (the index's concept ID, its name)``; :class:`DecisionError`
when the index has no such concept."""
AttributeLookup = Callable[[str], Mapping[str, str]]
"""``attributes(concept_id) -> the concept's vocabulary attributes`` (OMOP's
``vocabulary_id``, ``concept_code``, ...; empty for a vocabulary without them);
:class:`DecisionError` when the index has no such concept."""


def _unknown(index: TermIndex, concept_id: str) -> DecisionError:
    where = index.path or "(in memory)"
    return DecisionError(
        f"no concept {concept_id!r} in the project's index {where}, neither as a "
        "concept ID nor as an alternative ID: nothing written; check the ID with "
        f"termnorm lookup {concept_id} --index {where} (a namespace is optional)"
    )


def index_concepts(index: TermIndex) -> ConceptResolver:
    """The resolver of ``index`` (see the module)."""

    def resolve(concept_id: str) -> tuple[str, str]:
        row = index.resolve_id(concept_id.strip())
        if row is None:
            raise _unknown(index, concept_id)
        concept = index.concepts.iloc[row]
        return str(concept["concept_id"]), str(concept["name"])

    return resolve


def index_attributes(index: TermIndex) -> AttributeLookup:
    """The attribute lookup of ``index``: a concept's ``attributes`` as the index holds them
    (its own ID; the exports look up the IDs their decisions stored)."""

    def attributes(concept_id: str) -> Mapping[str, str]:
        row = index.resolve_id(concept_id)
        if row is None:
            raise _unknown(index, concept_id)
        return dict(index.concepts.iloc[row].get("attributes") or {})

    return attributes


def _on_first_use(
    spec: PipelineSpec, of: Callable[[TermIndex], Callable[[str], T]]
) -> Callable[[str], T]:
    """``of(index)`` for the index ``spec`` names (``None``: the default index), the index
    read on the first call only."""
    loaded: list[Callable[[str], T]] = []

    def call(concept_id: str) -> T:
        if not loaded:
            from termnorm.search.build import resolve_index

            loaded.append(of(resolve_index(spec.index)))
        return loaded[0](concept_id)

    return call


def project_concepts(spec: PipelineSpec) -> ConceptResolver:
    """The resolver of the index ``spec`` names (``None``: the default index), read on
    its first use only: a decision on a candidate never loads the index."""
    return _on_first_use(spec, index_concepts)


def project_attributes(spec: PipelineSpec) -> AttributeLookup:
    """The attribute lookup of the index ``spec`` names, read on its first use only (once
    per export: an export that needs no attribute never loads the index)."""
    return _on_first_use(spec, index_attributes)


def _folded(text: str) -> str:
    return " ".join(text.split()).casefold()


def checked_name(concept_id: str, name: str, given: str | None) -> str:
    """``name`` (the index's) when ``given`` is ``None`` or the same name (case and spacing
    aside); :class:`DecisionError` otherwise (the client labelled the ID with another
    concept's name: which one did the reviewer mean?)."""
    if given is not None and _folded(given) != _folded(name):
        raise DecisionError(
            f"concept_name {given!r} is not the name of {concept_id} in the project's index "
            f"({name!r}): nothing written; send the ID of the concept meant, and its name as "
            "the index gives it (or no concept_name)"
        )
    return name
