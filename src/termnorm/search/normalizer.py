"""The embedding normalizer: query → encoder → nearest terms or concepts → ranked concepts.

Contract (implements :class:`termnorm.search.Matcher`):

* ``mode="term"`` searches the term vectors ("T"); a concept scores as its best term and
  appears once, with that term as ``matched_term``. Terms are over-fetched until ``k``
  distinct concepts are found and no unfetched term could still enter or tie the top ``k``.
* ``mode="concept"`` searches the concept mean vectors ("C"); ``matched_term`` is the
  concept's name.
* Order is deterministic: higher score first; ties (:func:`~termnorm.search.candidate.rank_key`)
  go to the concept matched at its own name, then to the smaller ``concept_id``. Within a
  concept, the best term, its name on a tie, else the term with the smaller row.
* Queries are validated (:mod:`termnorm.search.query`). :meth:`Normalizer.normalize_batch`
  raises :class:`QueryError` for the first bad row; :meth:`Normalizer.normalize_rows` returns
  one :class:`RowResult` per input with the message in ``error`` instead (for files).
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum
from typing import NamedTuple

import numpy as np

from termnorm.index.base import SearchResult
from termnorm.index.term_index import Encoder, TermIndex
from termnorm.search.candidate import TIE_DECIMALS, Candidate, is_name, rank_key
from termnorm.search.query import DEFAULT_MAX_CHARS, QueryError, query_problem

__all__ = ["Normalizer", "RowResult", "SearchMode"]

MIN_OVERFETCH = 16


class SearchMode(str, Enum):
    """Which vectors a query is compared with: terms ("T") or concept means ("C")."""

    TERM = "term"
    CONCEPT = "concept"


class RowResult(NamedTuple):
    """Candidates for one input row, or why there are none (``error`` set, no candidates)."""

    candidates: list[Candidate]
    error: str | None = None


class Normalizer:
    """Top-``k`` concepts for query texts from a :class:`TermIndex` and its encoder."""

    def __init__(
        self,
        index: TermIndex,
        encoder: Encoder,
        mode: SearchMode | str = SearchMode.TERM,
        max_chars: int = DEFAULT_MAX_CHARS,
        batch_size: int = 256,
    ) -> None:
        index.check_encoder(encoder)
        self.index = index
        self.encoder = encoder
        self.mode = SearchMode(mode)
        self.max_chars = max_chars
        self.batch_size = batch_size
        self.name = f"embedding-{self.mode.value}"
        self._concept_ids = index.concepts["concept_id"].to_numpy(dtype=object)
        self._names = index.concepts["name"].to_numpy(dtype=object)
        self._term_is_name = np.zeros(0, dtype=bool)  # per index term, filled on first use

    # ------------------------------------------------------------------ Matcher protocol
    def normalize_batch(self, texts: Sequence[str], k: int = 5) -> list[list[Candidate]]:
        """Top-``k`` concepts per text; :class:`QueryError` (naming the row) on a bad text."""
        results = self.normalize_rows(texts, k)
        for row, result in enumerate(results):
            if result.error is not None:
                raise QueryError(result.error, row=row)
        return [r.candidates for r in results]

    def alt_ids(self, concept_id: str) -> list[str]:
        """Other IDs of a concept (xrefs, merged IDs)."""
        return self.index.alt_ids(concept_id)

    # ------------------------------------------------------------------ entry points
    def normalize(self, text: str, k: int = 5) -> list[Candidate]:
        """Top-``k`` concepts for one text (:class:`QueryError` when it is not usable)."""
        return self.normalize_batch([text], k)[0]

    def normalize_rows(
        self, texts: Sequence[object], k: int = 5, show_progress: bool = False
    ) -> list[RowResult]:
        """One :class:`RowResult` per input, in order; bad inputs carry their message."""
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        problems = [query_problem(t, self.max_chars) for t in texts]
        rows = [i for i, p in enumerate(problems) if p is None]
        queries = [str(texts[i]).strip() for i in rows]
        vectors = self.encoder.encode(
            queries, batch_size=self.batch_size, show_progress=show_progress, desc="queries"
        )
        ranked = self.rank(vectors, k)
        out = [RowResult([], p) for p in problems]
        for row, candidates in zip(rows, ranked, strict=True):
            out[row] = RowResult(candidates)
        return out

    def rank(self, query_vectors: np.ndarray, k: int) -> list[list[Candidate]]:
        """Top-``k`` distinct concepts for each query vector."""
        n = len(self.index.terms) if self.mode is SearchMode.TERM else len(self.index.concepts)
        out: list[list[Candidate]] = [[] for _ in range(len(query_vectors))]
        pending = np.arange(len(query_vectors))
        fetch = min(n, max(4 * k, k + MIN_OVERFETCH))
        while len(pending) and n:
            result = self._search(query_vectors[pending], fetch)
            unfinished = []
            for j, q in enumerate(pending):
                candidates, complete = self._collect(result, j, k, exhaustive=fetch >= n)
                out[q] = candidates
                if not complete:
                    unfinished.append(q)
            pending = np.asarray(unfinished, dtype=np.int64)
            fetch = min(n, fetch * 4)
        return out

    # ------------------------------------------------------------------ internals
    def _search(self, vectors: np.ndarray, fetch: int) -> SearchResult:
        if self.mode is SearchMode.TERM:
            return self.index.search_terms(vectors, fetch)
        return self.index.search_concepts(vectors, fetch)

    def _collect(
        self, result: SearchResult, row: int, k: int, exhaustive: bool
    ) -> tuple[list[Candidate], bool]:
        """Deduplicated top-``k`` from one result row, and whether more fetching is moot."""
        scores, ids = result.scores[row], result.ids[row]
        valid = ids >= 0
        best: dict[int, tuple[float, int]] = {}  # concept row -> (score, hit id), best first
        for score, hit in zip(scores[valid].tolist(), ids[valid].tolist(), strict=True):
            concept = int(self.index.term_concept[hit]) if self.mode is SearchMode.TERM else hit
            seen = best.get(concept)
            if seen is None or (
                round(seen[0], TIE_DECIMALS) == round(score, TIE_DECIMALS)
                and self._at_name(concept, hit)
                and not self._at_name(concept, seen[1])
            ):
                best[concept] = (seen[0] if seen else score, hit)
        order = sorted(
            best,
            key=lambda c: rank_key(
                best[c][0], self._at_name(c, best[c][1]), str(self._concept_ids[c])
            ),
        )[:k]
        candidates = [
            Candidate(
                concept_id=str(self._concept_ids[c]),
                name=str(self._names[c]),
                score=float(best[c][0]),
                matched_term=self._matched(c, best[c][1]),
                rank=rank,
            )
            for rank, c in enumerate(order, start=1)
        ]
        # an unfetched hit scores <= the last fetched one; it matters only if it can tie the k-th
        done = exhaustive or not valid.all()
        last = round(float(scores[-1]), TIE_DECIMALS)
        done = done or (len(order) == k and last < round(candidates[-1].score, TIE_DECIMALS))
        return candidates, done

    def _at_name(self, concept: int, hit: int) -> bool:
        """Whether hit ``hit`` of ``concept`` is the concept's name (always, in concept mode)."""
        if self.mode is SearchMode.CONCEPT:
            return True
        if len(self._term_is_name) != len(self.index.terms):  # first use, or terms were added
            terms = self.index.terms["term"].to_numpy(dtype=object)
            names = self._names[self.index.term_concept]
            self._term_is_name = np.fromiter(
                (is_name(str(t), str(n)) for t, n in zip(terms, names, strict=True)),
                dtype=bool,
                count=len(terms),
            )
        return bool(self._term_is_name[hit])

    def _matched(self, concept: int, hit: int) -> str:
        if self.mode is SearchMode.CONCEPT:
            return str(self._names[concept])
        return str(self.index.terms["term"].iat[hit])
