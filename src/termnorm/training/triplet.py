"""Triplet-network training (Xu & Bethard 2021) on the CODER trainer's engineering.

``termnorm train --loss triplet --train-data o|od [--mentions FILE]`` runs
:class:`TripletTrainer`: the :class:`~termnorm.training.Trainer` (optimizer, schedule,
precision, checkpoints, ``--resume``, signals, progress bar, JSONL log, dev evaluation, model
card) with the KG batches and CODER losses swapped for

* :class:`TripletSampler` — Train:O or Train:OD texts (:mod:`termnorm.training.triplet_data`)
  in batches of 2k texts = P groups × K texts (``--texts-per-concept``, 2 = the paper's one
  positive per anchor), every anchor with a positive; counter-based, so resume and DDP /
  accumulation shards reproduce the same stream;
* :class:`TripletObjective` — the batch-hard soft-margin triplet loss
  (:class:`~termnorm.losses.BatchHardSoftMarginTripletLoss`) on the un-normalised pooled
  vectors, Euclidean distance (the saved model is searched by cosine).

The paper's hyper-parameters (PubMed-BERT, GPU): batch 1500, lr 3e-5, Adam, no warm-up,
sequence length 8, 100 epochs; ``TripletTrainer.paper_overrides`` lists the ones that map onto
:class:`~termnorm.training.TrainConfig`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
import torch
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from transformers import PreTrainedModel

from termnorm.encoders.pooling import Pooling, pool
from termnorm.kg import KnowledgeGraph
from termnorm.losses.batch_hard_triplet import BatchHardSoftMarginTripletLoss, TripletDistance
from termnorm.training.config import TrainConfig
from termnorm.training.sampler import Batch
from termnorm.training.trainer import DevEvaluator, Trainer
from termnorm.training.triplet_data import (
    AnchorPositiveSampler,
    TripletCorpus,
    build_triplet_corpus,
)

__all__ = ["TripletObjective", "TripletSampler", "TripletTrainer"]

logger = logging.getLogger(__name__)

MentionPairs = Sequence[tuple[str, Sequence[str]]]


class TripletSampler:
    """:class:`Batch` es of 2k texts from a :class:`TripletCorpus` (the trainer's interface).

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
        self.relation_labels: list[str] = []  # the trainer's KG-sampler interface: no relations
        self.type_labels: list[str] = []
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

    def refresh(self, encode: Callable[[list[str]], np.ndarray], *args: Any) -> None:
        """No neighbour table: batch-hard mining picks the hard pairs inside each batch."""

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


class TripletObjective(nn.Module):
    """Transformer + pooling + batch-hard soft-margin triplet loss (``{"loss", "triplet"}``)."""

    relation_head = None

    def __init__(
        self,
        model: PreTrainedModel,
        pooling: Pooling,
        distance: TripletDistance | str = TripletDistance.EUCLIDEAN,
    ) -> None:
        super().__init__()
        self.model = model
        self.pooling = pooling
        self.loss = BatchHardSoftMarginTripletLoss(distance)

    def head_parameters(self) -> list[nn.Parameter]:
        """No head: only the encoder trains."""
        return []

    def forward(self, tokens: dict[str, torch.Tensor], batch: Batch) -> dict[str, torch.Tensor]:
        """Loss parts for one batch of texts."""
        hidden = self.model(**tokens).last_hidden_state  # [N, T, d]
        emb = pool(hidden, tokens["attention_mask"], self.pooling).float()  # [N, d]
        loss = self.loss(emb, batch.labels.to(emb.device))
        return {"loss": loss, "triplet": loss.detach()}


class TripletTrainer(Trainer):
    """The CODER :class:`Trainer` with Train:O/OD batches and the triplet loss.

    Args:
        config: ``loss`` triplet; ``train_data`` o|od, ``od_ratio``, ``texts_per_concept`` and
            ``k`` (batch = 2k texts) shape the batches.
        kg: the ontology (default: ``KnowledgeGraph.load(config.kg)``).
        mentions: ``(text, gold_ids)`` training mentions for Train:OD (the CLI reads
            ``--mentions FILE`` with :func:`termnorm.mentions.read_mentions`).
        evaluator, primary_metric, dist_info: as for :class:`Trainer`.
    """

    paper_overrides: ClassVar[Mapping[str, Any]] = {
        "k": 750,  # batch 1500
        "lr": 3e-5,
        "warmup": 0.0,
        "max_length": 8,
    }

    def __init__(
        self,
        config: TrainConfig,
        kg: KnowledgeGraph | None = None,
        mentions: MentionPairs | None = None,
        evaluator: DevEvaluator | None = None,
        primary_metric: str = "dev_acc@1",
        **kwargs: Any,
    ) -> None:
        super().__init__(config, kg, evaluator, primary_metric, **kwargs)
        self.corpus = build_triplet_corpus(
            self.kg, config.train_data, mentions, config.od_ratio, config.seed
        )
        logger.info("triplet corpus: %s", self.corpus.counts())

    def _setup(self) -> None:
        # encoder, optimizer (encoder parameters only), schedule, precision from the parent;
        # its CODER sampler and objective are then replaced
        super()._setup()
        c, info = self.config, self.info
        self.sampler = TripletSampler(  # type: ignore[assignment]
            self.corpus, 2 * c.k, c.texts_per_concept, c.seed, info.world_size * c.grad_accum
        )
        self.model = TripletObjective(  # type: ignore[assignment]
            self.encoder.model, self.encoder.pooling
        ).to(info.device)
        self.wrapped = self.model
        if info.enabled:
            ids = [info.device.index] if info.device.type == "cuda" else None
            self.wrapped = DistributedDataParallel(self.model, device_ids=ids)
