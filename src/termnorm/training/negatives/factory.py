"""The negative strategy a run's config names (``--negatives``)."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from termnorm.kg import KnowledgeGraph
from termnorm.training.mtcg_data import ConceptDictionary, MtcgItem
from termnorm.training.negatives.base import NegativeStrategy, PooledNegatives, RandomNegatives
from termnorm.training.negatives.keyword import keyword_pools
from termnorm.training.negatives.online import OnlineNegatives
from termnorm.training.negatives.tfidf import tfidf_pools
from termnorm.training.negatives.tree import tree_pools
from termnorm.training.objectives.mtcg import NegativeKind

__all__ = ["build_negatives"]


def build_negatives(
    kind: NegativeKind | str,
    kg: KnowledgeGraph,
    dictionary: ConceptDictionary,
    items: Sequence[MtcgItem],
    k: int,
    seed: int = 0,
    keywords: tuple[Collection[str], Collection[str]] | None = None,
) -> NegativeStrategy:
    """The strategy ``kind`` over ``items``; ``keywords`` = ``(sites, types)`` for ``keyword``.

    Raises:
        ValueError: ``keyword`` without keywords, ``tree`` on a KG without hierarchy.
    """
    kind = NegativeKind(kind)
    if kind is NegativeKind.ONLINE:
        return OnlineNegatives(dictionary, items, k, seed)
    if kind is NegativeKind.RANDOM:
        return RandomNegatives(dictionary, items, k, seed)
    if kind is NegativeKind.TFIDF:  # ranked: the first k of each pool, every epoch
        pools = tfidf_pools(dictionary, items, k)
        return PooledNegatives("tfidf", pools, dictionary, items, k, seed, ranked=True)
    if kind is NegativeKind.TREE:
        return PooledNegatives(
            "tree", tree_pools(kg, dictionary, items), dictionary, items, k, seed
        )
    if keywords is None or not (keywords[0] or keywords[1]):
        raise ValueError(
            "--negatives keyword needs a keyword vocabulary with at least one site or type "
            "keyword (--keywords FILE)"
        )
    pools = keyword_pools(dictionary, items, keywords[0], keywords[1], seed=seed)
    return PooledNegatives("keyword", pools, dictionary, items, k, seed)
