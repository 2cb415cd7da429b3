"""The shape every negative strategy has, and the pooled form of the fixed ones.

A strategy answers :meth:`NegativeStrategy.negatives` ``(item, epoch) -> k texts`` for the
items of :class:`~termnorm.training.mtcg_data.MtcgItems`; the answer depends only on the
seed, the item, the epoch and the strategy's state, so resumed runs and DDP ranks agree.
Every text it returns names a *wrong* concept: never a concept of the item's gold set (own or
alternative IDs), and never a text that is a term of a gold concept.

:class:`PooledNegatives` serves the strategies whose candidates are fixed before training
(TF-IDF, tree, keyword): a pool of texts per item, ``k`` of them drawn per epoch (or the first
``k`` when the pool is ranked). A pool with fewer than ``k`` texts is completed with random
wrong concepts; how many were completed is counted in :meth:`stats` (the model card).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Protocol

import numpy as np

from termnorm.training.mtcg_data import ConceptDictionary, MtcgItem
from termnorm.training.protocols import Encode

__all__ = [
    "NegativeStrategy",
    "PooledNegatives",
    "RandomNegatives",
    "first_wrong_concepts",
    "random_negatives",
]


class NegativeStrategy(Protocol):
    """Negatives of the MTCG's items (module doc)."""

    name: str

    def negatives(self, item: int, epoch: int) -> list[str]:
        """The ``k`` negative texts of ``item`` in ``epoch`` (0-based)."""
        ...

    def refresh(self, epoch: int, encode: Encode) -> None:
        """Prepare ``epoch`` with the current model (online mining; a no-op elsewhere)."""
        ...

    def ready(self, epoch: int) -> bool:
        """Whether :meth:`negatives` can answer for ``epoch`` now."""
        ...

    def state_dict(self) -> dict[str, Any]:
        """What a checkpoint needs to continue."""
        ...

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore :meth:`state_dict`."""
        ...

    def stats(self) -> dict[str, int]:
        """Counts for the model card."""
        ...


def first_wrong_concepts(
    dictionary: ConceptDictionary, item: MtcgItem, ranked_terms: Iterable[int], k: int
) -> list[str]:
    """The texts of the first ``k`` distinct wrong concepts of a best-first list of term
    indices (a concept appears once, by its first term; a gold term never; ``-1`` ends)."""
    picked: list[str] = []
    concepts: set[int] = set()
    for t in ranked_terms:
        if t < 0:
            break
        c = int(dictionary.term_concepts[t])
        text = dictionary.term_texts[t]
        if c in item.gold or c in concepts or dictionary.names_gold(text, item.gold):
            continue
        concepts.add(c)
        picked.append(text)
        if len(picked) == k:
            break
    return picked


def random_negatives(
    dictionary: ConceptDictionary,
    item: MtcgItem,
    k: int,
    rng: np.random.Generator,
    taken: Sequence[str] = (),
) -> list[str]:
    """``k`` names of uniformly drawn wrong concepts, distinct from ``taken`` and each other.

    Raises:
        ValueError: the dictionary has too few wrong concepts.
    """
    out: list[str] = []
    used = set(taken)
    wrong = len(dictionary) - len(item.gold)
    if wrong < k:
        raise ValueError(
            f"the KG has {wrong} concepts besides the gold ones of {item.mention!r}; "
            f"{k} negatives need more (lower --negatives-per-mention)"
        )
    for _ in range(100 * k):
        if len(out) == k:
            break
        c = int(rng.integers(len(dictionary)))
        name = dictionary.names[c]
        if c in item.gold or name in used or dictionary.names_gold(name, item.gold):
            continue
        used.add(name)
        out.append(name)
    if len(out) < k:
        raise ValueError(f"could not draw {k} distinct wrong concept names for {item.mention!r}")
    return out


class PooledNegatives:
    """Fixed pools of negative texts per item (module doc).

    Args:
        name: the strategy's name (``tfidf``, ``tree``, ``keyword``).
        pools: per item, its candidate texts (already wrong, see module doc).
        dictionary: the concepts random completions come from.
        items: the items, in pool order.
        k: negatives per item and epoch.
        seed: seed of the draws.
        ranked: take each pool's first ``k`` (TF-IDF's nearest) instead of a random ``k``
            per epoch.
    """

    def __init__(
        self,
        name: str,
        pools: Sequence[Sequence[str]],
        dictionary: ConceptDictionary,
        items: Sequence[MtcgItem],
        k: int,
        seed: int = 0,
        ranked: bool = False,
    ) -> None:
        if len(pools) != len(items):
            raise ValueError(f"{len(pools)} pools for {len(items)} items")
        self.name = name
        self.pools = [list(p) for p in pools]
        self.dictionary = dictionary
        self.items = list(items)
        self.k = k
        self.seed = seed
        self.ranked = ranked

    def negatives(self, item: int, epoch: int) -> list[str]:
        """``k`` texts of the item's pool (module doc), completed at random when short."""
        pool = self.pools[item]
        rng = np.random.default_rng([self.seed, epoch, item])
        if len(pool) >= self.k:
            if self.ranked:
                return pool[: self.k]
            return [pool[int(i)] for i in rng.choice(len(pool), self.k, replace=False)]
        extra = random_negatives(self.dictionary, self.items[item], self.k - len(pool), rng, pool)
        return [*pool, *extra]

    def refresh(self, epoch: int, encode: Encode) -> None:
        """Nothing to refresh: the pools are fixed."""

    def ready(self, epoch: int) -> bool:
        """Always."""
        return True

    def state_dict(self) -> dict[str, Any]:
        """The pools follow from the data and the seed: nothing to save."""
        return {"name": self.name}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Check the checkpoint used this strategy."""
        if state.get("name") != self.name:
            raise ValueError(
                f"the checkpoint used --negatives {state.get('name')}, not {self.name}"
            )

    def stats(self) -> dict[str, int]:
        """Items whose pool was short of ``k`` (completed at random), and the pool sizes."""
        sizes = [len(p) for p in self.pools]
        return {
            "negative_items": len(sizes),
            "negative_items_completed_at_random": sum(s < self.k for s in sizes),
            "negative_pool_texts": sum(sizes),
        }


class RandomNegatives(PooledNegatives):
    """Random negatives: empty pools, so each epoch draws k_n wrong concepts' names per item
    (the paper's baseline strategy, and the online strategy's first epoch)."""

    def __init__(
        self, dictionary: ConceptDictionary, items: Sequence[MtcgItem], k: int, seed: int = 0
    ) -> None:
        super().__init__("random", [[] for _ in items], dictionary, items, k, seed)

    def stats(self) -> dict[str, int]:
        """Only the item count: every negative is random by design."""
        return {"negative_items": len(self.items)}
