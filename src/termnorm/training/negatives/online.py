"""Online negatives (the paper's Algorithm 1): the current model's nearest wrong concepts.

Epoch 1 uses random negatives. At the start of every later epoch the dictionary's terms and
the items' mentions are embedded with the current weights (L2-normalised, as the index
searches them), and for each mention faiss returns its nearest terms (exact inner product);
walking them best first, the first ``k_n`` distinct concepts that are not in the item's gold
set (and whose term is no gold term) become its negatives for the epoch, each as the term
that brought it near. Should the search return fewer (a tiny KG), the rest is random.

The table of the current epoch is part of the state (a resumed run continues with the
negatives it had); it is rebuilt when an epoch starts.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import numpy as np

from termnorm.errors import MissingExtraError
from termnorm.training.mtcg_data import ConceptDictionary, MtcgItem
from termnorm.training.negatives.base import first_wrong_concepts, random_negatives
from termnorm.training.protocols import Encode

__all__ = ["OnlineNegatives", "nearest_wrong"]

logger = logging.getLogger(__name__)


def nearest_wrong(
    dictionary: ConceptDictionary,
    items: Sequence[MtcgItem],
    mention_vectors: np.ndarray,
    term_vectors: np.ndarray,
    k: int,
    search_k: int | None = None,
) -> list[list[str]]:
    """Per item, the best terms of its ``k`` nearest wrong concepts (module doc); may be
    shorter than ``k`` when the ``search_k`` nearest terms hold too few wrong concepts.

    ``mention_vectors`` has one row per *distinct* mention, in first-appearance order over
    ``items``; rows of both arrays are L2-normalised (inner product = cosine).
    """
    try:
        import faiss
    except ImportError as exc:
        raise MissingExtraError("faiss-cpu", "faiss") from exc
    search_k = min(len(dictionary.term_texts), search_k or 8 * k + 64)
    index = faiss.IndexFlatIP(term_vectors.shape[1])
    index.add(np.ascontiguousarray(term_vectors, dtype=np.float32))
    _, nearest = index.search(np.ascontiguousarray(mention_vectors, dtype=np.float32), search_k)
    mentions = list(dict.fromkeys(it.mention for it in items))
    row = {m: i for i, m in enumerate(mentions)}
    return [first_wrong_concepts(dictionary, it, nearest[row[it.mention]], k) for it in items]


class OnlineNegatives:
    """Random negatives in epoch 0, then the current model's nearest wrong concepts.

    Args:
        dictionary: the KG's concepts and terms.
        items: the training items.
        k: negatives per item (k_n).
        seed: seed of the random draws.
    """

    name = "online"

    def __init__(
        self,
        dictionary: ConceptDictionary,
        items: Sequence[MtcgItem],
        k: int,
        seed: int = 0,
    ) -> None:
        self.dictionary = dictionary
        self.items = list(items)
        self.k = k
        self.seed = seed
        self.epoch = 0  # the epoch `table` serves (epoch 0: random, no table)
        self.table: list[list[str]] | None = None
        self.refreshes = 0
        self.completed = 0  # items completed at random in the last refresh

    def ready(self, epoch: int) -> bool:
        """Epoch 0 always; a later epoch once :meth:`refresh` has mined it."""
        return epoch == 0 or (self.table is not None and self.epoch == epoch)

    def refresh(self, epoch: int, encode: Encode) -> None:
        """Mine the negatives of ``epoch`` (≥ 1) with the current weights (module doc)."""
        if epoch == 0 or self.ready(epoch):
            return
        mentions = list(dict.fromkeys(it.mention for it in self.items))
        logger.info(
            "online negatives for epoch %d: embedding %d terms and %d mentions",
            epoch + 1,
            len(self.dictionary.term_texts),
            len(mentions),
        )
        terms = encode(self.dictionary.term_texts)
        queries = encode(mentions)
        self.table = nearest_wrong(self.dictionary, self.items, queries, terms, self.k)
        self.completed = sum(len(row) < self.k for row in self.table)
        self.epoch = epoch
        self.refreshes += 1

    def negatives(self, item: int, epoch: int) -> list[str]:
        """The ``k`` negatives of ``item`` in ``epoch`` (module doc).

        Raises:
            RuntimeError: ``epoch`` ≥ 1 was not mined yet (the batch source calls
                :meth:`refresh` before the epoch's first step).
        """
        rng = np.random.default_rng([self.seed, epoch, item])
        if epoch == 0:
            return random_negatives(self.dictionary, self.items[item], self.k, rng)
        if not self.ready(epoch) or self.table is None:
            raise RuntimeError(
                f"online negatives of epoch {epoch + 1} were not mined: refresh(epoch, encode) "
                "must run when the epoch starts"
            )
        row = self.table[item]
        if len(row) < self.k:
            extra = random_negatives(self.dictionary, self.items[item], self.k - len(row), rng, row)
            return [*row, *extra]
        return list(row)

    def state_dict(self) -> dict[str, Any]:
        """The epoch mined last and its table."""
        return {"name": self.name, "epoch": self.epoch, "table": self.table}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore :meth:`state_dict`."""
        if state.get("name") != self.name:
            raise ValueError(
                f"the checkpoint used --negatives {state.get('name')}, not {self.name}"
            )
        self.epoch = int(state["epoch"])
        self.table = state["table"]

    def stats(self) -> dict[str, int]:
        """Refreshes run in this process and items short of k_n in the last one."""
        return {
            "negative_items": len(self.items),
            "online_refreshes": self.refreshes,
            "negative_items_completed_at_random": self.completed,
        }
