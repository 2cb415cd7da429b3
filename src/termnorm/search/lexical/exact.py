"""Exact-match baseline: a concept matches when one of its terms equals the query.

Equality is on :func:`~termnorm.search.lexical.dictionary.normalize_text` forms (case, space
and punctuation ignored); every match scores 1.0, so the order is the dictionary's tie rule:
concepts matched at a preferred name first, then by ``concept_id``. A query with no equal
term gets no candidate.
"""

from __future__ import annotations

from collections.abc import Sequence

from termnorm.kg.graph import KnowledgeGraph
from termnorm.search.candidate import Candidate
from termnorm.search.lexical.dictionary import LexicalMatcherBase, normalize_text

__all__ = ["ExactMatcher"]


class ExactMatcher(LexicalMatcherBase):
    """Matcher returning the concepts whose normalized terms equal the normalized query."""

    name = "exact"

    def __init__(self, kg: KnowledgeGraph) -> None:
        super().__init__(kg)
        d = self.dictionary
        # normalized text -> [(not preferred, concept, term)], sorted; one entry per concept
        # (its first equal term: terms come grouped by concept, preferred names first)
        index: dict[str, dict[int, tuple[bool, int, int]]] = {}
        for t, norm in enumerate(d.norm_terms):
            c = int(d.term_concept[t])
            index.setdefault(norm, {}).setdefault(c, (not bool(d.preferred[t]), c, t))
        self._index = {norm: sorted(hits.values()) for norm, hits in index.items()}

    def normalize_batch(self, texts: Sequence[str], k: int = 5) -> list[list[Candidate]]:
        """Up to ``k`` exactly matching concepts per text (score 1.0), best first."""
        out: list[list[Candidate]] = []
        for text in texts:
            hits = self._index.get(normalize_text(text), [])[:k]
            out.append(
                [self.dictionary.candidate(c, t, 1.0, r) for r, (_, c, t) in enumerate(hits, 1)]
            )
        return out
