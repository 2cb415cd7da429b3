"""What a learned score may not overrule: the recall stage's exact dictionary match.

A ranker (or the combiner it carries) reorders the recall stage's top ``k_c`` candidates by
a learned score. Where the recall stage already found the query *as written* in the
dictionary, that score can only move the answer away from it: a learned score is a guess
about a text, an exact match is the text. So the ranked order keeps one rule by
construction:

* **exact match first**: when the recall stage's top candidate is an exact match of the
  query (:func:`is_exact_match`: the query equals, after
  :func:`~termnorm.search.lexical.normalize_text`, the text that matched or the concept's
  name), that candidate stays first, whatever its learned score; the other candidates follow
  in the learned order (:func:`defer_to_exact`). Its ``score`` stays its learned score (a
  probability stays a probability), so the scores of a deferred ranking are not sorted.

The document's own short form is kept by the same construction one level up: the choice
between a mention's ranking as written and its abbreviation-expanded ranking
(:class:`~termnorm.search.context.ExpansionChoice`) compares the recall stage's scores of
ranked candidates, never their learned ones, so a ranker cannot turn
the choice the recall stage made (a tie goes to the document's definition) the other way.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from termnorm.search.candidate import Candidate
from termnorm.search.lexical.dictionary import normalize_text

__all__ = ["defer_to_exact", "is_exact_match"]


def is_exact_match(query: str, candidate: Candidate) -> bool:
    """Whether ``query`` equals ``candidate``'s matched text or its concept's name after
    :func:`~termnorm.search.lexical.normalize_text` (case, spaces, punctuation ignored)."""
    q = normalize_text(query)
    return bool(q) and q in (normalize_text(candidate.matched_term), normalize_text(candidate.name))


def defer_to_exact(
    query: str,
    recalled: Sequence[Candidate],
    ranked: Sequence[Candidate],
    scores: np.ndarray,
) -> tuple[list[Candidate], np.ndarray]:
    """``ranked`` (``recalled`` reordered by a learned score, ``scores`` in that order) with
    the recall stage's top candidate moved back to first when it is an exact match of
    ``query`` (module doc); ranks renumbered from 1. Unchanged otherwise."""
    ranked = list(ranked)
    if not recalled or not is_exact_match(query, recalled[0]):
        return ranked, scores
    top = recalled[0].concept_id
    at = next(i for i, c in enumerate(ranked) if c.concept_id == top)
    if at == 0:
        return ranked, scores
    order = [at, *(i for i in range(len(ranked)) if i != at)]
    moved = [ranked[i]._replace(rank=r) for r, i in enumerate(order, start=1)]
    return moved, scores[order]
