"""Restrict a search to concepts of some namespaces and some semantic types.

A concept's *namespace* is the part of its ID before the last ``:`` (``HP`` for
``HP:0001250``, ``MESH`` for ``MESH:D005955``; empty for an ID without one). A
:class:`ConceptFilter` with ``namespaces`` keeps concepts in any of them; with
``semantic_types``, concepts having any of them; with ``excluded_types``, concepts having none
of those; with several, concepts passing all. Names are compared case-insensitively. A namespace or type the index does not have raises
:class:`FilterError` listing the ones it has; a filter no concept passes raises
:class:`~termnorm.errors.EmptyResultError`.

The filter is applied inside the ranking (:mod:`termnorm.search.top_concepts`): concepts that do
not pass are skipped and the search goes on until ``k`` pass or the space is exhausted.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from termnorm.errors import EmptyResultError, FilterError
from termnorm.search.parts import ConceptColumns

__all__ = ["ConceptFilter", "FilterError", "namespace_of"]

_SHOWN = 20


def namespace_of(concept_id: str) -> str:
    """``"HP:0001250"`` → ``"HP"``; an ID without ``:`` has the empty namespace."""
    return concept_id.rpartition(":")[0]


def _listing(values: Iterable[str]) -> str:
    shown = sorted(set(values))
    more = f" and {len(shown) - _SHOWN} more" if len(shown) > _SHOWN else ""
    return ", ".join(repr(v) for v in shown[:_SHOWN]) + more


@dataclass(frozen=True)
class ConceptFilter:
    """Namespaces and semantic types a concept must be in, and semantic types it must not
    have (empty: no restriction)."""

    namespaces: tuple[str, ...] = ()
    semantic_types: tuple[str, ...] = ()
    excluded_types: tuple[str, ...] = ()

    @classmethod
    def of(
        cls,
        namespaces: Iterable[str] | None = None,
        semantic_types: Iterable[str] | None = None,
        excluded_types: Iterable[str] | None = None,
    ) -> ConceptFilter:
        """A filter from optional lists (a single string counts as one name)."""
        return cls(_names(namespaces), _names(semantic_types), _names(excluded_types))

    @property
    def active(self) -> bool:
        """Whether anything is restricted."""
        return bool(self.namespaces or self.semantic_types or self.excluded_types)

    def __str__(self) -> str:
        parts = []
        if self.namespaces:
            parts.append(f"namespaces {', '.join(self.namespaces)}")
        if self.semantic_types:
            parts.append(f"semantic types {', '.join(self.semantic_types)}")
        if self.excluded_types:
            parts.append(f"none of the semantic types {', '.join(self.excluded_types)}")
        return " and ".join(parts) or "no filter"

    def mask(self, columns: ConceptColumns) -> np.ndarray | None:
        """Bool over the concept rows of ``columns``: which concepts pass (``None``: all)."""
        if not self.active:
            return None
        keep = np.ones(len(columns.ids), dtype=bool)
        if self.namespaces:
            spaces = [namespace_of(str(c)) for c in columns.ids]
            wanted = _known(self.namespaces, spaces, "namespace")
            keep &= np.fromiter((s.casefold() in wanted for s in spaces), bool, len(keep))
        types = [[str(t) for t in ts] for ts in columns.semantic_types]
        for asked, keep_if in ((self.semantic_types, True), (self.excluded_types, False)):
            if asked:
                wanted = _known(asked, (t for ts in types for t in ts), "semantic type")
                keep &= np.fromiter(
                    (any(t.casefold() in wanted for t in ts) is keep_if for ts in types),
                    bool,
                    len(keep),
                )
        if not keep.any():
            raise EmptyResultError(f"no concept of the index is in {self}; widen the filter")
        return keep


def _names(values: Iterable[str] | None) -> tuple[str, ...]:
    if values is None:
        return ()
    if isinstance(values, str):
        values = [values]
    return tuple(dict.fromkeys(v.strip() for v in values if v.strip()))


def _known(asked: tuple[str, ...], existing: Iterable[str], what: str) -> set[str]:
    """``asked`` case-folded, or :class:`FilterError` naming the unknown ones and what exists."""
    have = set(existing)
    folded = {h.casefold() for h in have}
    unknown = [a for a in asked if a.casefold() not in folded]
    if unknown:
        listing = _listing(have) if have else "none"
        raise FilterError(
            f"unknown {what} {', '.join(repr(u) for u in unknown)}: the index has {listing}"
        )
    return {a.casefold() for a in asked}
