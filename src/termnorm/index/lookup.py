"""Concepts of an index by ID: what :meth:`TermIndex.concept` returns, and ID resolution.

A :class:`ConceptInfo` carries the concept's terms and its KG relations
(:class:`RelationInfo`: the relation label, its direction seen from the concept, and the
neighbour's ID and name); ``relations`` is ``None`` for an index built before indexes held
the KG's relations (format 2), which says to rebuild it rather than showing no neighbours.

:class:`RelationLookup` groups an index's ``head, relation, tail`` table by concept row and
answers :meth:`RelationLookup.of` in ``O(log n + edges)``: outgoing edges (the concept is the
head) first, then incoming ones, each group ordered by relation label, neighbour name and ID.

An ID resolves to a concept when it is the concept's ``concept_id``, or else when its
:func:`~termnorm.kg.ids.id_key` (namespace dropped, upper-cased) equals the key of a concept's
ID or of one of its ``alt_ids``: ``D005955`` finds ``MESH:D005955``, ``OMIM:333`` finds the
concept listing it as an alternative ID. When keys collide a concept's own ID wins over an
alternative ID, then the smaller ``concept_id``. An ID that resolves to nothing raises
:class:`UnknownConceptError` (a ``KeyError``) saying so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from enum import Enum
from typing import Any

import numpy as np
import pandas as pd

from termnorm.errors import ArtifactMismatchError, UnknownConceptError
from termnorm.kg.ids import id_key

__all__ = [
    "ConceptInfo",
    "Direction",
    "RelationInfo",
    "RelationLookup",
    "TermInfo",
    "UnknownConceptError",
    "id_key_map",
]


@dataclass(frozen=True)
class TermInfo:
    """One term of a concept, with its provenance in the KG."""

    term: str
    source: str
    is_preferred: bool


class Direction(str, Enum):
    """Which end of a KG edge ``head -relation-> tail`` the looked-up concept is."""

    OUT = "out"  # the concept is the head: concept -relation-> neighbour
    IN = "in"  # the concept is the tail: neighbour -relation-> concept


@dataclass(frozen=True)
class RelationInfo:
    """One KG edge of a concept: ``relation``, its ``direction`` and the neighbour."""

    relation: str
    direction: Direction
    concept_id: str
    name: str

    def to_dict(self) -> dict[str, str]:
        """JSON-ready form (``direction`` as ``"out"``/``"in"``)."""
        return {**asdict(self), "direction": self.direction.value}


@dataclass(frozen=True)
class ConceptInfo:
    """A concept of an index: its name, semantic types, alternative IDs, terms, KG
    relations (``None``: the index predates stored relations; rebuild it to have them) and
    the vocabulary's own attributes (``vocabulary_id``, ``concept_code``, ...; often none)."""

    concept_id: str
    name: str
    semantic_types: tuple[str, ...]
    alt_ids: tuple[str, ...]
    synonyms: tuple[TermInfo, ...]
    relations: tuple[RelationInfo, ...] | None = None
    attributes: Mapping[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (``attributes`` only when the concept has some)."""
        out = {
            "concept_id": self.concept_id,
            "name": self.name,
            "semantic_types": list(self.semantic_types),
            "alt_ids": list(self.alt_ids),
            "synonyms": [asdict(t) for t in self.synonyms],
            "relations": (
                None if self.relations is None else [r.to_dict() for r in self.relations]
            ),
        }
        return {**out, "attributes": dict(self.attributes)} if self.attributes else out


def id_key_map(concept_ids: Sequence[str], alt_ids: Sequence[Sequence[str]]) -> dict[str, int]:
    """``id_key(ID) -> concept row`` over concept IDs and alt IDs (see the module docstring)."""
    own: dict[str, int] = {}
    alt: dict[str, int] = {}
    for row in sorted(range(len(concept_ids)), key=concept_ids.__getitem__):
        own.setdefault(id_key(concept_ids[row]), row)
        for other in alt_ids[row]:
            alt.setdefault(id_key(str(other)), row)
    return {**alt, **own}


class RelationLookup:
    """Edges by concept row. ``relations``: ``head, relation, tail`` concept IDs;
    ``concepts``: the index's concept table (``concept_id``, ``name``; row = concept row);
    ``concept_row``: its ID -> row map; ``where`` names the index in errors."""

    def __init__(
        self,
        relations: pd.DataFrame,
        concepts: pd.DataFrame,
        concept_row: Mapping[str, int],
        where: str,
    ) -> None:
        heads = relations["head"].map(concept_row)
        tails = relations["tail"].map(concept_row)
        unknown = heads.isna() | tails.isna()
        if unknown.any():
            first = relations[unknown].iloc[0]
            raise ArtifactMismatchError(
                f"{where}: {int(unknown.sum())} relation(s) name concepts the index does not "
                f"have (first: {first['head']} {first['relation']} {first['tail']}); the "
                "relations table does not belong to this index: rebuild it with "
                "'termnorm index build'"
            )
        self._head = heads.to_numpy(np.int64)
        self._tail = tails.to_numpy(np.int64)
        self._relation = relations["relation"].astype(str).to_numpy()
        self._ids = concepts["concept_id"].astype(str).to_numpy()
        self._names = concepts["name"].astype(str).to_numpy()
        by_head = np.argsort(self._head, kind="stable")
        by_tail = np.argsort(self._tail, kind="stable")
        # (direction, edge order, sorted own ends, the other end per edge)
        self._groups = (
            (Direction.OUT, by_head, self._head[by_head], self._tail),
            (Direction.IN, by_tail, self._tail[by_tail], self._head),
        )

    def __len__(self) -> int:
        return len(self._head)

    def of(self, row: int) -> tuple[RelationInfo, ...]:
        """The edges of the concept at ``row``: outgoing, then incoming (see the module doc)."""
        found: list[RelationInfo] = []
        for direction, order, sorted_ends, others in self._groups:
            lo, hi = np.searchsorted(sorted_ends, [row, row + 1])
            group = [
                RelationInfo(
                    str(self._relation[edge]),
                    direction,
                    str(self._ids[others[edge]]),
                    str(self._names[others[edge]]),
                )
                for edge in order[lo:hi]
            ]
            found.extend(sorted(group, key=lambda r: (r.relation, r.name, r.concept_id)))
        return tuple(found)
