"""Lexical baselines: exact match, character n-gram TF-IDF and edit distance, as Matchers.

``make_lexical_matcher(LexicalKind.TFIDF, kg)`` builds one by name (the CLI's
``--baseline``); each is a :class:`~termnorm.search.Matcher` over a KG's terms, so the
evaluators score it side by side with embedding indexes. The matcher classes are imported
on first use, so importing this package stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from termnorm._lazy import lazy_getattr
from termnorm.search.lexical.kinds import LexicalKind, make_lexical_matcher

if TYPE_CHECKING:  # pragma: no cover
    from termnorm.search.lexical.dictionary import TermDictionary, normalize_text
    from termnorm.search.lexical.edit import EditDistanceMatcher
    from termnorm.search.lexical.exact import ExactMatcher
    from termnorm.search.lexical.tfidf import TfidfMatcher

__all__ = [
    "EditDistanceMatcher",
    "ExactMatcher",
    "LexicalKind",
    "TermDictionary",
    "TfidfMatcher",
    "make_lexical_matcher",
    "normalize_text",
]

__getattr__ = lazy_getattr(
    __name__,
    {
        "EditDistanceMatcher": "edit",
        "ExactMatcher": "exact",
        "TermDictionary": "dictionary",
        "TfidfMatcher": "tfidf",
        "normalize_text": "dictionary",
    },
)
