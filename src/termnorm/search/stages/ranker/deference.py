"""What a learned score may not overrule: the recall stage's exact dictionary match.

A learned score is a guess about a text; an exact match is the text. So when the recall
stage's top candidate is an exact match of the query (:func:`is_exact_match`: the query
equals, after :func:`~termnorm.search.lexical.normalize_text`, the matched text or the
concept's name), it stays first whatever its learned score, the others following in the
learned order (:func:`defer_to_exact`). Its ``score`` stays its learned score (a probability
stays a probability), so a deferred ranking's scores are not sorted.

The same holds one level up: :class:`~termnorm.search.context.ExpansionChoice` compares the
recall scores of ranked candidates, never their learned ones.
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
