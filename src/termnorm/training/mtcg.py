"""Multi-task candidate generator (MTCG; Liang, Xue & Ruan 2021), composed from the shared trainer.

``termnorm train --objective mtcg --kg KG --mentions TRAIN... --negatives
online|random|tfidf|tree|keyword --out MODEL`` runs the :class:`~termnorm.training.Trainer` with

* :class:`MtcgSource` as batch source: per micro-batch ``--mention-batch`` items (mention,
  gold concept; :mod:`termnorm.training.mtcg_data`) in a seeded per-epoch order; its texts are
  the B mentions, then their B gold names, then B × k_n negatives (k_n =
  ``--negatives-per-mention``, item-major) from the strategy ``--negatives`` names
  (:mod:`termnorm.training.negatives`). An epoch is one pass over the items; the online
  strategy re-mines its negatives with the current weights when an epoch starts.
* :class:`MtcgObjective`: the margin triplet loss (margin ``--triplet-margin``, Euclidean,
  the encoder's mean pooling) over (mention, gold name, negative_j) plus ``--implication-weight``
  × the cross-entropy of the implication-number head on the mentions' [CLS] vectors
  (labels ``min(#gold codes, 3)``); the head is saved in ``MODEL/implication_head/``
  (:mod:`termnorm.encoders.implication`).

Paper settings (GPU, BERT-base): AdamW, lr 2e-5, k_n = 4, margin 1; :data:`PAPER_OVERRIDES`
lists those that are :class:`~termnorm.training.TrainConfig` fields and not already its
defaults. ``--steps`` counts optimizer steps: steps = epochs × the batches per epoch logged
at start (and written on the model card).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import torch

from termnorm.encoders.implication import ImplicationHead
from termnorm.losses.implication import ImplicationLoss, balanced_class_weights
from termnorm.losses.margin_triplet import MarginTripletLoss
from termnorm.training.composition import Job, Parts, composition
from termnorm.training.mtcg_data import ConceptDictionary, MtcgItems, build_mtcg_items
from termnorm.training.negatives.base import NegativeStrategy
from termnorm.training.negatives.factory import build_negatives
from termnorm.training.negatives.keyword import read_keyword_sets
from termnorm.training.objectives.mtcg import ImplicationWeighting, NegativeKind
from termnorm.training.protocols import Encode, Objective

__all__ = [
    "PAPER_OVERRIDES",
    "MtcgBatch",
    "MtcgObjective",
    "MtcgSource",
    "mtcg_parts",
    "mtcg_trainer",
]

logger = logging.getLogger(__name__)

PAPER_OVERRIDES: Mapping[str, Any] = MappingProxyType(
    {"lr": 2e-5, "freeze_embeddings": False, "freeze_layers": 0}
)
"""The paper's settings that differ from :class:`TrainConfig`'s defaults (``loss="mtcg"``,
``negatives_per_mention=4``, ``triplet_margin=1`` already are)."""


@dataclass
class MtcgBatch:
    """One micro-batch: ``terms`` = B mentions, B gold names, B × k negatives (item-major)."""

    terms: list[str]
    n_items: int
    k: int
    code_counts: torch.Tensor  # [B] int64: gold codes of each item's mention
    items: list[int]  # item indices (for tests and logs)


class MtcgSource:
    """Counter-based MTCG batches (module doc); a trainer batch source.

    Batch ``(step, shard)`` is item batch ``n = step · shards + shard``: epoch
    ``n // batches_per_epoch``, items from that epoch's seeded permutation.
    """

    def __init__(
        self,
        data: MtcgItems,
        dictionary: ConceptDictionary,
        negatives: NegativeStrategy,
        batch_size: int,
        k: int,
        seed: int = 0,
        shards: int = 1,
    ) -> None:
        self.data = data
        self.items = data.items
        self.dictionary = dictionary
        self.negatives = negatives
        self.batch_size = max(1, min(batch_size, len(self.items)))
        self.k = k
        self.seed = seed
        self.shards = max(1, shards)
        self._order: tuple[int, list[int]] | None = None

    @property
    def batches_per_epoch(self) -> int:
        """Item batches in one pass over the items (the last one may be smaller)."""
        return -(-len(self.items) // self.batch_size)

    def epoch_of(self, step: int, shard: int = 0) -> int:
        """The epoch (0-based) that micro-batch ``shard`` of ``step`` belongs to."""
        return (step * self.shards + shard) // self.batches_per_epoch

    def _epoch_order(self, epoch: int) -> list[int]:
        if self._order is None or self._order[0] != epoch:
            perm = torch.randperm(
                len(self.items), generator=torch.Generator().manual_seed(self.seed * 7919 + epoch)
            )
            self._order = (epoch, perm.tolist())
        return self._order[1]

    def batch(self, step: int, shard: int = 0) -> MtcgBatch:
        """The texts and code counts of micro-batch ``shard`` of ``step``."""
        epoch, cursor = divmod(step * self.shards + shard, self.batches_per_epoch)
        start = cursor * self.batch_size
        chosen = self._epoch_order(epoch)[start : start + self.batch_size]
        items = [self.items[i] for i in chosen]
        negatives = [text for i in chosen for text in self.negatives.negatives(i, epoch)]
        terms = [
            *(it.mention for it in items),
            *(self.dictionary.names[it.concept] for it in items),
            *negatives,
        ]
        counts = torch.tensor([it.codes for it in items], dtype=torch.long)
        return MtcgBatch(terms, len(items), self.k, counts, chosen)

    def before_step(self, step: int, encode: Encode) -> None:
        """Let the strategy prepare every epoch this step's micro-batches reach (online
        mining re-embeds the dictionary when an epoch starts)."""
        for epoch in sorted({self.epoch_of(step, s) for s in range(self.shards)}):
            if not self.negatives.ready(epoch):
                self.negatives.refresh(epoch, encode)

    def state_dict(self) -> dict[str, Any]:
        """The seed and the strategy's state (the online table of the current epoch)."""
        return {"seed": self.seed, "negatives": self.negatives.state_dict()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore :meth:`state_dict`."""
        if int(state["seed"]) != self.seed:
            raise ValueError(f"checkpoint seed {state['seed']} differs from --seed {self.seed}")
        self.negatives.load_state_dict(state["negatives"])

    def stats(self) -> dict[str, int]:
        """Counts for the model card: items, mentions, implication classes, batches, drops."""
        return {
            "items": len(self.items),
            "mentions": self.data.mentions,
            **self.data.code_counts(),
            "batches_per_epoch": self.batches_per_epoch,
            "mentions_dropped": sum(self.data.dropped.values()),
            **self.negatives.stats(),
        }


class MtcgObjective(Objective):
    """Triplet loss on the pooled vectors + implication cross-entropy on the mentions' [CLS]
    vectors (``{"loss", "triplet", "implication"}``); the head is saved with the model.

    Args:
        hidden_size: the transformer's hidden size (the [CLS] vector's).
        margin: triplet margin (paper: 1).
        implication_weight: weight of the cross-entropy (paper: 1).
        class_weights: per-class weights ``[3]`` of the cross-entropy (``None``: plain mean).
    """

    def __init__(
        self,
        hidden_size: int,
        margin: float = 1.0,
        implication_weight: float = 1.0,
        class_weights: torch.Tensor | None = None,
    ) -> None:
        super().__init__()
        self.head = ImplicationHead(hidden_size)
        self.triplet = MarginTripletLoss(margin)
        self.implication = ImplicationLoss(class_weights)
        self.implication_weight = implication_weight

    @property
    def needs_cls(self) -> bool:
        """The head reads the mentions' first-token vectors."""
        return True

    def forward(
        self, embeddings: torch.Tensor, batch: MtcgBatch, cls: torch.Tensor | None = None
    ) -> dict[str, torch.Tensor]:
        """Loss parts of the vectors ``[B(2 + k), d]`` of one batch (layout: :class:`MtcgBatch`)."""
        if cls is None:
            raise ValueError("MtcgObjective needs the [CLS] vectors (cls=...) of the batch")
        b, k = batch.n_items, batch.k
        mentions = embeddings[:b]  # [B, d]
        positives = embeddings[b : 2 * b]  # [B, d]
        negatives = embeddings[2 * b :].reshape(b, k, -1)  # [B, k, d]
        triplet = self.triplet(mentions, positives, negatives)
        logits = self.head(cls[:b])  # [B, 3]
        implication = self.implication(logits, batch.code_counts)
        loss = triplet + self.implication_weight * implication
        return {"loss": loss, "triplet": triplet.detach(), "implication": implication.detach()}

    def save(self, folder: Any) -> None:
        """Write ``implication_head/`` into the model folder."""
        self.head.save(folder)


def mtcg_parts(job: Job) -> Parts:
    """The parts of ``--loss mtcg`` (module doc).

    ``mentions``: the ``(text, gold_ids)`` training mentions, whole (a composite mention is one
    pair with all its gold IDs; :func:`termnorm.training.data.training_mentions` reads them
    so for ``--loss mtcg``).

    Raises:
        ValueError: no training mentions, none usable, or a strategy that cannot run on this
            KG (``tree`` without hierarchy, ``keyword`` without vocabulary).
    """
    config, kg, mentions = job.config, job.kg, job.mentions
    if not mentions:
        raise ValueError(
            "--loss mtcg trains on annotated mentions: pass --mentions FILE (e.g. the "
            "NCBI-disease training split)"
        )
    dictionary = ConceptDictionary.from_kg(kg)
    data = build_mtcg_items(dictionary, mentions)
    keywords = None
    if config.mtcg.negatives is NegativeKind.KEYWORD and config.mtcg.keywords is not None:
        keywords = read_keyword_sets(config.mtcg.keywords)
    k = config.mtcg.negatives_per_mention
    negatives = build_negatives(
        config.mtcg.negatives, kg, dictionary, data.items, k, config.seed, keywords
    )
    encoder, info = job.encoder()
    shards = info.world_size * config.grad_accum
    source = MtcgSource(
        data, dictionary, negatives, config.mtcg.mention_batch, k, config.seed, shards
    )
    logger.info(
        "mtcg: %d items from %d mentions %s, %d batches per epoch, --negatives %s",
        len(data.items),
        data.mentions,
        data.code_counts(),
        source.batches_per_epoch,
        config.mtcg.negatives.value,
    )
    hidden = int(encoder.model.config.hidden_size)
    class_weights = None
    if config.mtcg.implication_class_weights is ImplicationWeighting.BALANCED:
        class_weights = balanced_class_weights(torch.tensor([it.codes for it in data.items]))
        logger.info(
            "mtcg: implication class weights %s", [round(w, 3) for w in class_weights.tolist()]
        )
    objective = MtcgObjective(
        hidden, config.mtcg.triplet_margin, config.mtcg.implication_weight, class_weights
    )
    return Parts(source, objective)


mtcg_trainer = composition(mtcg_parts)
