"""What a search module searches: blocks of rows, each row standing for one concept.

A *part* is a block of vectors searched by one backend: the index's term rows, the index's
concept rows, the domain synonyms' rows, or concept means over domain (or ontology + domain)
texts. For each row it knows the concept (a row of the index's ``concepts`` table), whether
the row's text is the concept's name (for the tie rule of
:func:`~termnorm.search.candidate.rank_key`) and what a hit on it reports (matched text, KG
source, preferred or not). A part may *exclude* concepts: their rows in it are ignored (OD-C
searches the index's concept vectors except those of concepts whose mean moved with domain
synonyms, and those concepts' new means in a second part).

Which parts make up each module is decided by :class:`~termnorm.search.SearchSpace`; how
their hits become ranked concepts by :func:`~termnorm.search.top_concepts.rank_parts`.

:class:`Restricted` searches only some rows of a part, exactly (a blocked matrix product
over the selected rows, read block by block): a filter that leaves few concepts is answered
that way instead of over-fetching from the whole part.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from termnorm.index.base import SearchResult, VectorIndex, as_matrix
from termnorm.index.exact import exact_search
from termnorm.index.term_index import backend_search
from termnorm.kg.graph import with_attributes
from termnorm.search.candidate import Source, is_name
from termnorm.search.prescan import MAX_QUERIES, Int8Prescan, prescan_available

if TYPE_CHECKING:  # pragma: no cover
    from termnorm.index.term_index import TermIndex

__all__ = [
    "ConceptColumns",
    "ConceptRows",
    "IndexTerms",
    "MeanRows",
    "Part",
    "Restricted",
    "TextRows",
]


@dataclass(frozen=True)
class ConceptColumns:
    """The index's concept columns as arrays (row ``j`` = concept row ``j``), read once."""

    ids: np.ndarray  # object [c]
    names: np.ndarray  # object [c]
    semantic_types: np.ndarray  # object [c], each a list of str
    attributes: np.ndarray  # object [c], each a dict str -> str (often empty)

    @classmethod
    def of(cls, index: TermIndex) -> ConceptColumns:
        """The columns of ``index.concepts``."""
        concepts = index.concepts
        return cls(
            concepts["concept_id"].to_numpy(dtype=object),
            concepts["name"].to_numpy(dtype=object),
            concepts["semantic_types"].to_numpy(dtype=object),
            with_attributes(concepts)["attributes"].to_numpy(dtype=object),
        )

    def attribute_pairs(self, row: int) -> tuple[tuple[str, str], ...]:
        """The attributes of the concept at ``row`` as ``(key, value)`` pairs."""
        return tuple((str(k), str(v)) for k, v in self.attributes[row].items())


class Part(ABC):
    """Rows searched by one backend; see the module docstring.

    Attributes: ``origin`` (:class:`Source` reported for a hit), ``concept`` (int64 concept
    row of each row), ``vectors`` ``[n, d]`` (searched rows; may be memory-mapped) and
    ``excluded`` (bool over concept rows, or ``None``).
    """

    origin: Source
    concept: np.ndarray
    vectors: np.ndarray
    excluded: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.concept)

    def answerable(self, allowed: np.ndarray | None) -> np.ndarray | None:
        """Bool over concept rows: those this part may answer, of ``allowed`` (``None``: all)
        minus the ones it excludes; ``None`` when nothing is ruled out."""
        if self.excluded is None:
            return allowed
        return ~self.excluded if allowed is None else allowed & ~self.excluded

    @abstractmethod
    def search(self, queries: np.ndarray, k: int) -> SearchResult:
        """Top-``k`` rows of this part per query, best first (ties: smaller row)."""

    @abstractmethod
    def at_name(self, row: int) -> bool:
        """Whether ``row``'s text is its concept's name."""

    @abstractmethod
    def describe(self, row: int) -> tuple[str, str, bool]:
        """``(matched text, KG source of the text, is it the preferred name)`` of ``row``."""


class IndexTerms(Part):
    """The index's term rows, searched through the index's term backend (O-T).

    When that backend is exact and the pre-scan fits
    (:func:`~termnorm.search.prescan.prescan_available`), calls with few queries are answered
    by the int8 pre-scan with exact re-scoring (:mod:`termnorm.search.prescan`). It is built
    once, under a lock, at the second such call (a one-shot command does not pay for it) or
    at once by :meth:`prepare` (a service calls it before it says ready).
    """

    origin = Source.ONTOLOGY

    def __init__(self, index: TermIndex, columns: ConceptColumns) -> None:
        self.index = index
        self.columns = columns
        self.concept = index.term_concept
        self.vectors = index.term_vectors
        self._is_name: np.ndarray | None = None  # per term, computed on first use
        self._described: tuple[list[str], list[str], list[bool]] | None = None  # idem
        exact = index.card.get("backend", {}).get("terms", {}).get("backend") == "exact"
        fits = exact and prescan_available(len(self.concept), int(self.vectors.shape[1]))
        self._few_calls = 0 if fits else None  # None: never
        self._prescan: Int8Prescan | None = None
        self._lock = threading.Lock()  # one build of the lazy structures, whoever asks

    def prepare(self) -> None:
        """Build now what searches otherwise build on first use: the pre-scan (where it
        applies) and the per-row name and description tables."""
        with self._lock:
            if self._few_calls is not None and self._prescan is None:
                self._prescan = Int8Prescan(self.vectors)
        if len(self.concept):
            self.at_name(0)
            self.describe(0)

    def _single_query_scan(self) -> Int8Prescan | None:
        """The pre-scan for a call with few queries, built at the second such call."""
        if self._prescan is not None or self._few_calls is None:
            return self._prescan
        with self._lock:
            self._few_calls += 1
            if self._prescan is None and self._few_calls >= 2:
                self._prescan = Int8Prescan(self.vectors)
            return self._prescan

    def search(self, queries: np.ndarray, k: int) -> SearchResult:
        if len(queries) <= MAX_QUERIES:
            prescan = self._single_query_scan()
            if prescan is not None:
                return prescan.search(as_matrix(queries, self.vectors.shape[1]), k)
        return self.index.search_terms(queries, k)

    def at_name(self, row: int) -> bool:
        if self._is_name is None:
            terms = self.index.terms["term"].to_numpy(dtype=object)
            names = self.columns.names[self.concept]
            self._is_name = np.fromiter(
                (is_name(str(t), str(n)) for t, n in zip(terms, names, strict=True)),
                dtype=bool,
                count=len(terms),
            )
        return bool(self._is_name[row])

    def describe(self, row: int) -> tuple[str, str, bool]:
        if self._described is None:  # plain lists: a pandas cell lookup costs ~20 us a hit
            terms = self.index.terms
            self._described = (
                [str(t) for t in terms["term"]],
                [str(t) for t in terms["source"]],
                [bool(t) for t in terms["is_preferred"]],
            )
        text, source, preferred = self._described
        return text[row], source[row], preferred[row]


class ConceptRows(Part):
    """The index's concept vectors, searched through its concept backend (O-C); a hit
    reports the concept's name. ``excluded`` concepts are skipped."""

    origin = Source.ONTOLOGY

    def __init__(
        self, index: TermIndex, columns: ConceptColumns, excluded: np.ndarray | None = None
    ) -> None:
        self.index = index
        self.columns = columns
        self.concept = np.arange(len(index.concepts), dtype=np.int64)
        self.vectors = index.concept_vectors
        self.excluded = excluded

    def search(self, queries: np.ndarray, k: int) -> SearchResult:
        return self.index.search_concepts(queries, k)

    def at_name(self, row: int) -> bool:
        return True

    def describe(self, row: int) -> tuple[str, str, bool]:
        return str(self.columns.names[row]), "", True


class TextRows(Part):
    """Domain synonyms: one row per (concept, text), in their own backend (D-T)."""

    origin = Source.DOMAIN

    def __init__(
        self,
        texts: tuple[str, ...],
        sources: tuple[str, ...],
        concept: np.ndarray,
        names: np.ndarray,
        vectors: np.ndarray,
        backend: VectorIndex,
    ) -> None:
        self.texts = texts
        self.sources = sources
        self.concept = concept
        self.vectors = vectors
        self.backend = backend
        self._is_name = np.fromiter(
            (is_name(t, str(names[c])) for t, c in zip(texts, concept.tolist(), strict=True)),
            dtype=bool,
            count=len(texts),
        )

    def search(self, queries: np.ndarray, k: int) -> SearchResult:
        return backend_search(self.backend, self.vectors, queries, k)

    def at_name(self, row: int) -> bool:
        return bool(self._is_name[row])

    def describe(self, row: int) -> tuple[str, str, bool]:
        return self.texts[row], self.sources[row], False


class MeanRows(Part):
    """Concept means computed at search time (D-C, and OD-C for concepts with domain
    synonyms), one row per concept, in their own backend; a hit reports the name."""

    origin = Source.DOMAIN

    def __init__(
        self, concept: np.ndarray, names: np.ndarray, vectors: np.ndarray, backend: VectorIndex
    ) -> None:
        self.concept = concept
        self.names = names
        self.vectors = vectors
        self.backend = backend

    def search(self, queries: np.ndarray, k: int) -> SearchResult:
        return backend_search(self.backend, self.vectors, queries, k)

    def at_name(self, row: int) -> bool:
        return True

    def describe(self, row: int) -> tuple[str, str, bool]:
        return str(self.names[self.concept[row]]), "", True


class _Gathered:
    """Rows ``ids`` (ascending) of ``base`` as a matrix that :func:`exact_search` reads one
    block at a time (nothing is copied beyond the block being searched)."""

    ndim = 2

    def __init__(self, base: np.ndarray, ids: np.ndarray) -> None:
        self.base = base
        self.ids = ids
        self.shape = (len(ids), int(base.shape[1]))

    def __len__(self) -> int:
        return len(self.ids)

    def __getitem__(self, rows: slice) -> np.ndarray:
        return np.asarray(self.base[self.ids[rows]], dtype=np.float32)


class Restricted(Part):
    """Only the rows ``ids`` (ascending) of ``base``, searched exactly; hits are ``base``
    rows, so everything else is asked of ``base``."""

    def __init__(self, base: Part, ids: np.ndarray) -> None:
        self.base = base
        self.ids = ids
        self.origin = base.origin
        self.concept = base.concept
        self.vectors = base.vectors
        self.excluded = base.excluded
        self._rows = _Gathered(base.vectors, ids)

    def __len__(self) -> int:
        return len(self.ids)

    def search(self, queries: np.ndarray, k: int) -> SearchResult:
        local = exact_search(self._rows, queries, k)  # type: ignore[arg-type]
        ids = np.where(local.ids >= 0, self.ids[np.maximum(local.ids, 0)], local.ids)
        return SearchResult(local.scores, ids)

    def at_name(self, row: int) -> bool:
        return self.base.at_name(row)

    def describe(self, row: int) -> tuple[str, str, bool]:
        return self.base.describe(row)
