"""The lexical baselines by name, and the factory the CLI and benchmarks use.

Kept free of heavy imports (scikit-learn, rapidfuzz) so that the CLI can offer the choices
without loading them.
"""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from termnorm.kg.graph import KnowledgeGraph
    from termnorm.search.candidate import Matcher

__all__ = ["LexicalKind", "make_lexical_matcher"]


class LexicalKind(str, Enum):
    """The lexical baselines: exact match, char 3-gram TF-IDF, normalized edit distance."""

    EXACT = "exact"
    TFIDF = "tfidf"
    EDIT = "edit"


def make_lexical_matcher(kind: LexicalKind | str, kg: KnowledgeGraph) -> Matcher:
    """The baseline matcher ``kind`` over ``kg``'s terms."""
    kind = LexicalKind(kind)
    if kind is LexicalKind.EXACT:
        from termnorm.search.lexical.exact import ExactMatcher

        return ExactMatcher(kg)
    if kind is LexicalKind.TFIDF:
        from termnorm.search.lexical.tfidf import TfidfMatcher

        return TfidfMatcher(kg)
    from termnorm.search.lexical.edit import EditDistanceMatcher

    return EditDistanceMatcher(kg)
