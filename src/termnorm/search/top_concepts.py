"""The one ranking routine: hits of one or more parts → the top ``k`` distinct concepts.

Contract of :func:`rank_parts`, for each query vector:

* Scores are cosines clipped to [-1, 1] (float16 vectors and fp rounding give 1.000016).
* Hits of all parts are taken best first: higher score, then the earlier part (ontology
  before domain), then the smaller row.
* A concept appears once. It scores as its best hit; its matched text is that hit's, except
  that a hit at the concept's name with the same score (rounded to
  :data:`~termnorm.search.candidate.TIE_DECIMALS`) is preferred.
* Concepts are ordered by :func:`~termnorm.search.candidate.rank_key`: rounded score, then
  the concept matched at its own name, then the smaller ``concept_id``.
* Concepts that fail the filter (``allowed`` false) and concepts a part excludes are skipped.
* Each part is searched for ``max(4k, k + 64)`` rows, then four times more, until ``k``
  concepts are found and no unfetched row of any part could still enter or tie the ``k``-th
  place (its score, rounded, would be below the ``k``-th's), or every part is exhausted.

Candidates carry their provenance (:class:`~termnorm.search.candidate.Candidate`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from termnorm.index.base import SearchResult
from termnorm.search.candidate import TIE_DECIMALS, Candidate, rank_key
from termnorm.search.parts import ConceptColumns, Part

__all__ = ["MIN_OVERFETCH", "rank_parts"]

MIN_OVERFETCH = 64
# Every round is a full search of each part: 64 rows answer at the first round what 16 did in
# two (MEDIC, k=5, NCBI devel mentions: 1 query in 363 needs a second round instead of 90),
# and a few more rows cost next to nothing in the top-k selection of an exact scan.
_Best = dict[int, tuple[float, int, int]]  # concept row -> (score, part, row)


def rank_parts(
    columns: ConceptColumns,
    parts: Sequence[Part],
    queries: np.ndarray,
    k: int,
    allowed: np.ndarray | None = None,
) -> list[list[Candidate]]:
    """Top-``k`` distinct concepts per query vector (see the module docstring).

    ``columns``: the index's concepts; ``allowed``: bool over its concept rows (``None``:
    every concept).
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    masks = [part.answerable(allowed) for part in parts]
    out: list[list[Candidate]] = [[] for _ in range(len(queries))]
    pending = np.arange(len(queries))
    fetch = max(4 * k, k + MIN_OVERFETCH)
    live = [i for i, part in enumerate(parts) if len(part)]
    while len(pending) and live:
        sizes = {i: min(len(parts[i]), fetch) for i in live}
        results = {i: parts[i].search(queries[pending], sizes[i]) for i in live}
        exhausted = {i: sizes[i] >= len(parts[i]) for i in live}
        unfinished = []
        for j, q in enumerate(pending):
            best = _collect(parts, masks, results, j)
            out[q] = _candidates(columns, parts, best, k)
            if not _complete(results, exhausted, j, out[q], k):
                unfinished.append(q)
        pending = np.asarray(unfinished, dtype=np.int64)
        fetch *= 4
    return out


def _collect(
    parts: Sequence[Part],
    masks: Sequence[np.ndarray | None],
    results: dict[int, SearchResult],
    j: int,
) -> _Best:
    """Each concept's best hit in query ``j``'s results (name preferred on a rounded tie)."""
    hits: list[tuple[float, int, int]] = []  # (score, part, row), best first
    for p, result in results.items():
        ids = result.ids[j]
        valid = ids >= 0
        scores = np.clip(result.scores[j][valid], -1.0, 1.0).tolist()  # cosines
        hits.extend(zip(scores, [p] * len(scores), ids[valid].tolist(), strict=True))
    if len(results) > 1:  # each part's hits are already in order
        hits.sort(key=lambda h: (-h[0], h[1], h[2]))
    best: _Best = {}
    for score, p, row in hits:
        part = parts[p]
        concept = int(part.concept[row])
        mask = masks[p]
        if mask is not None and not mask[concept]:
            continue
        seen = best.get(concept)
        if seen is None:
            best[concept] = (score, p, row)
        elif (
            round(seen[0], TIE_DECIMALS) == round(score, TIE_DECIMALS)
            and part.at_name(row)
            and not parts[seen[1]].at_name(seen[2])
        ):
            best[concept] = (seen[0], p, row)
    return best


def _candidates(
    columns: ConceptColumns, parts: Sequence[Part], best: _Best, k: int
) -> list[Candidate]:
    """The top-``k`` of ``best`` by :func:`rank_key`, as candidates with provenance."""

    def key(concept: int) -> tuple[float, bool, str]:
        score, p, row = best[concept]
        return rank_key(score, parts[p].at_name(row), str(columns.ids[concept]))

    out = []
    for rank, concept in enumerate(sorted(best, key=key)[:k], start=1):
        score, p, row = best[concept]
        text, term_source, preferred = parts[p].describe(row)
        out.append(
            Candidate(
                concept_id=str(columns.ids[concept]),
                name=str(columns.names[concept]),
                score=float(score),
                matched_term=text,
                rank=rank,
                source=parts[p].origin.value,
                term_source=term_source,
                is_preferred=preferred,
                semantic_types=tuple(str(t) for t in columns.semantic_types[concept]),
                attributes=columns.attribute_pairs(concept),
            )
        )
    return out


def _complete(
    results: dict[int, SearchResult],
    exhausted: dict[int, bool],
    j: int,
    candidates: list[Candidate],
    k: int,
) -> bool:
    """Whether fetching more rows can no longer change query ``j``'s top ``k``: an unfetched
    row scores at most its part's last fetched one, and matters only if it can tie the k-th."""
    kth = round(candidates[-1].score, TIE_DECIMALS) if len(candidates) == k else None
    for p, result in results.items():
        ids, scores = result.ids[j], result.scores[j]
        if exhausted[p] or not (ids >= 0).all():
            continue
        if kth is None or round(float(scores[-1]), TIE_DECIMALS) >= kth:
            return False
    return True
