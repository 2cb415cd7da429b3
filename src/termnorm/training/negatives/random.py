"""Random negatives: k_n uniformly drawn wrong concepts per item, new ones every epoch (the
paper's baseline strategy, and the online strategy's first epoch)."""

from __future__ import annotations

from collections.abc import Sequence

from termnorm.training.mtcg_data import ConceptDictionary, MtcgItem
from termnorm.training.negatives.base import PooledNegatives

__all__ = ["random_strategy"]


def random_strategy(
    dictionary: ConceptDictionary, items: Sequence[MtcgItem], k: int, seed: int = 0
) -> PooledNegatives:
    """Empty pools, so every negative is a random wrong concept's name (per epoch and item)."""
    return _Random(dictionary, items, k, seed)


class _Random(PooledNegatives):
    def __init__(
        self, dictionary: ConceptDictionary, items: Sequence[MtcgItem], k: int, seed: int
    ) -> None:
        super().__init__("random", [[] for _ in items], dictionary, items, k, seed)

    def stats(self) -> dict[str, int]:
        """Only the item count: every negative is random by design."""
        return {"negative_items": len(self.items)}
