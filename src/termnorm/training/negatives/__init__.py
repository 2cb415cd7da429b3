"""Negative strategies of the multi-task candidate generator: one module per strategy
(TF-IDF, tree, keyword replacement, online; random in ``base``), :func:`build_negatives`
picks one."""

from __future__ import annotations

from typing import TYPE_CHECKING

from termnorm._lazy import lazy_getattr

if TYPE_CHECKING:  # pragma: no cover
    from termnorm.training.negatives.base import (
        NegativeStrategy,
        PooledNegatives,
        RandomNegatives,
        random_negatives,
    )
    from termnorm.training.negatives.factory import build_negatives
    from termnorm.training.negatives.keyword import (
        keyword_replacements,
        keyword_spans,
        read_keyword_sets,
    )
    from termnorm.training.negatives.online import OnlineNegatives, nearest_wrong
    from termnorm.training.negatives.tfidf import tfidf_pools
    from termnorm.training.negatives.tree import tree_pools

__all__ = [
    "NegativeStrategy",
    "OnlineNegatives",
    "PooledNegatives",
    "RandomNegatives",
    "build_negatives",
    "keyword_replacements",
    "keyword_spans",
    "nearest_wrong",
    "random_negatives",
    "read_keyword_sets",
    "tfidf_pools",
    "tree_pools",
]

_NAMES = {  # module: the names it gives
    "base": "NegativeStrategy PooledNegatives RandomNegatives random_negatives",
    "factory": "build_negatives",
    "keyword": "keyword_replacements keyword_spans read_keyword_sets",
    "online": "OnlineNegatives nearest_wrong",
    "tfidf": "tfidf_pools",
    "tree": "tree_pools",
}
__getattr__ = lazy_getattr(__name__, {n: m for m, names in _NAMES.items() for n in names.split()})
