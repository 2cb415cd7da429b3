"""A concept's KG neighbours: the index's relations table grouped by concept row.

:class:`RelationLookup` is built once from the ``head, relation, tail`` table of an index
(every end a concept of the index, :func:`~termnorm.index.tables.relation_table`) and answers
:meth:`RelationLookup.of` in ``O(log n + edges)``: the concept's outgoing edges (it is the
head) first, then its incoming ones, each group ordered by relation label, then neighbour
name, then neighbour ID.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from termnorm.errors import ArtifactMismatchError
from termnorm.index.lookup import Direction, RelationInfo

__all__ = ["RelationLookup"]


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
