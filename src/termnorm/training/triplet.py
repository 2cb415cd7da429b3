"""Triplet-network training (Xu & Bethard 2021), composed from the shared trainer.

``termnorm train --loss triplet --train-data o|od [--mentions FILE]`` runs the
:class:`~termnorm.training.Trainer` (optimizer, schedule, precision, checkpoints,
``--resume``, signals, progress bar, JSONL log, dev evaluation, model card) with

* :class:`TripletSampler` as batch source — Train:O or Train:OD texts
  (:mod:`termnorm.training.triplet_data`) in batches of 2k texts = P groups × K texts
  (``--texts-per-concept``, 2 = the paper's one positive per anchor), every anchor with a
  positive; counter-based, so resume and DDP / accumulation shards reproduce the same stream;
* :class:`TripletObjective` as objective — the batch-hard soft-margin triplet loss
  (:class:`~termnorm.losses.BatchHardSoftMarginTripletLoss`) on the un-normalised pooled
  vectors, Euclidean distance (the saved model is searched by cosine).

:func:`triplet_trainer` composes them. The paper's hyper-parameters (PubMed-BERT, GPU): batch
1500, lr 3e-5, Adam, no warm-up, sequence length 8, 100 epochs; :data:`PAPER_OVERRIDES` lists
the ones that map onto :class:`~termnorm.training.TrainConfig`.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import torch

from termnorm.losses.batch_hard_triplet import BatchHardSoftMarginTripletLoss, TripletDistance
from termnorm.training.composition import Job, Parts, composition
from termnorm.training.protocols import Encode, Objective
from termnorm.training.sampler import Batch
from termnorm.training.triplet_data import (
    AnchorPositiveSampler,
    TripletCorpus,
    build_triplet_corpus,
)

__all__ = [
    "PAPER_OVERRIDES",
    "TripletObjective",
    "TripletSampler",
    "triplet_parts",
    "triplet_trainer",
]

logger = logging.getLogger(__name__)

PAPER_OVERRIDES: Mapping[str, Any] = MappingProxyType(
    {
        "k": 750,  # batch 1500
        "lr": 3e-5,
        "warmup": 0.0,
        "max_length": 8,
    }
)
"""The paper's settings that are :class:`TrainConfig` fields (``loss="triplet"`` aside)."""


class TripletSampler:
    """:class:`Batch` es of texts from a :class:`TripletCorpus` (a trainer batch source).

    Batch ``(step, shard)`` is anchor batch number ``step · shards + shard`` of an
    :class:`AnchorPositiveSampler`, so it depends only on the seed and the counters.
    """

    def __init__(
        self,
        corpus: TripletCorpus,
        batch_size: int,
        texts_per_concept: int = 2,
        seed: int = 0,
        shards: int = 1,
    ) -> None:
        self.corpus = corpus
        self.texts = corpus.texts
        self.shards = max(1, shards)
        self.seed = seed
        self.anchors = AnchorPositiveSampler(corpus.labels, batch_size, texts_per_concept, seed)

    def batch(self, step: int, shard: int = 0) -> Batch:
        """The texts and concept labels of micro-batch ``shard`` of ``step``."""
        idx = self.anchors.batch_indices(step * self.shards + shard)
        labels = torch.as_tensor(self.anchors.labels[idx], dtype=torch.long)
        empty = torch.empty(0, dtype=torch.long)
        return Batch([self.texts[i] for i in idx], labels, empty, empty)

    def before_step(self, step: int, encode: Encode) -> None:
        """Nothing to refresh: batch-hard mining picks the hard pairs inside each batch."""

    def state_dict(self) -> dict[str, Any]:
        """Counter-based: the seed is the whole state."""
        return {"seed": self.seed}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore :meth:`state_dict`."""
        if int(state["seed"]) != self.seed:
            raise ValueError(f"checkpoint seed {state['seed']} differs from --seed {self.seed}")

    def stats(self) -> dict[str, int]:
        """Counts for the model card (|O|, |D| after repetition, concepts, anchors, ...)."""
        counts = self.corpus.counts()
        return {
            "ontology_texts": int(counts["ontology_texts"]),
            "domain_texts": int(counts["domain_texts"]),
            "concepts": int(counts["concepts"]),
            "single_text_concepts": int(counts["single_text_concepts"]),
            "anchors_per_epoch": len(self.anchors.anchors),
            "batches_per_epoch": self.anchors.batches_per_epoch,
            "mentions_dropped": sum(self.corpus.dropped.values()),
        }


class TripletObjective(Objective):
    """Batch-hard soft-margin triplet loss over a batch's vectors (``{"loss", "triplet"}``).

    It runs under the trainer's autocast, on the float32 vectors it is given.
    """

    def __init__(self, distance: TripletDistance | str = TripletDistance.EUCLIDEAN) -> None:
        super().__init__()
        self.loss = BatchHardSoftMarginTripletLoss(distance)

    def forward(self, embeddings: torch.Tensor, batch: Batch) -> dict[str, torch.Tensor]:
        """Loss parts of the vectors ``[N, d]`` of one batch of texts."""
        loss = self.loss(embeddings, batch.labels.to(embeddings.device))
        return {"loss": loss, "triplet": loss.detach()}


def triplet_parts(job: Job) -> Parts:
    """The parts of ``--loss triplet``.

    ``config``: ``train_data`` o|od, ``od_ratio``, ``texts_per_concept`` and ``k`` (batch = 2k
    texts) shape the batches. ``mentions``: the ``(text, gold_ids)`` training mentions of
    Train:OD (required there).
    """
    config = job.config
    corpus = build_triplet_corpus(
        job.kg, config.train_data, list(job.mentions) or None, config.triplet.od_ratio, config.seed
    )
    logger.info("triplet corpus: %s", corpus.counts())
    shards = job.encoder()[1].world_size * config.grad_accum
    sampler = TripletSampler(
        corpus, 2 * config.k, config.triplet.texts_per_concept, config.seed, shards
    )
    return Parts(sampler, TripletObjective())


triplet_trainer = composition(triplet_parts)
