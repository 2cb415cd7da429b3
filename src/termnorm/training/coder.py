"""CODER's training, composed: the KG sampler as batch source and the CODER losses as objective.

:class:`CoderObjective` turns the batch's 2k term vectors (heads then tails, see
:class:`~termnorm.training.sampler.KGSampler`) into the loss parts::

    loss = L_MS(e_1..e_2k; concepts)                                 (ms-v2: MS loss v2)
         + μ · L_rel(heads e_1..e_k, relations, tails e_k+1..e_2k)   (coder, transe, transe-margin)
         + w_sty · L_sty(e_1..e_2k; semantic types)                   (+sty objectives)

:func:`coder_trainer` composes a :class:`~termnorm.training.Trainer` from a config and a KG
(with ``--train-data od``, the training mentions join the KG's terms first, see
:func:`termnorm.training.data.with_domain_terms`).
"""

from __future__ import annotations

import logging
from pathlib import Path

import torch

from termnorm.kg import KnowledgeGraph
from termnorm.losses import (
    MultiSimilarityLoss,
    MultiSimilarityV2Loss,
    RelationHead,
    RelationKind,
    RelationLoss,
    SemanticTypeLoss,
    TransEMarginLoss,
    TransEMSLoss,
)
from termnorm.training.composition import Job, Parts, composition
from termnorm.training.config import LossKind, TrainConfig
from termnorm.training.data import with_domain_terms
from termnorm.training.protocols import Objective
from termnorm.training.sampler import Batch, KGSampler

__all__ = ["CoderObjective", "coder_parts", "coder_sampler", "coder_trainer"]

logger = logging.getLogger(__name__)


class CoderObjective(Objective):
    """The configured CODER losses over a :class:`Batch`'s term vectors.

    Args:
        dim: the term vectors' size d.
        config: the run's configuration (loss kind and weights).
        relation_labels: relation labels of the sampler (index order).
        n_types: number of semantic types (0 = no STY loss).
    """

    def __init__(
        self, dim: int, config: TrainConfig, relation_labels: list[str], n_types: int = 0
    ) -> None:
        super().__init__()
        self.ms = MultiSimilarityLoss()
        if config.loss is LossKind.MS_V2:
            self.ms = MultiSimilarityV2Loss(
                lam_pos=config.coder.ms_lam_pos, lam_neg=config.coder.ms_lam_neg
            )
        self.rel_weight = config.coder.relation_weight(config.loss)
        self.sty_weight = config.coder.sty_weight
        kind = LossKind(config.loss).relation
        self.relation: RelationLoss | TransEMarginLoss | None = None
        if kind == "matrix" and relation_labels:
            self.relation = RelationLoss(RelationHead(relation_labels, dim, RelationKind.MATRIX))
        elif kind == "transe" and relation_labels:
            self.relation = TransEMSLoss(RelationHead(relation_labels, dim, RelationKind.TRANSE))
        elif kind == "transe-margin" and relation_labels:
            self.relation = TransEMarginLoss(
                RelationHead(relation_labels, dim, RelationKind.TRANSE), config.coder.transe_margin
            )
        self.sty = SemanticTypeLoss(dim, n_types) if LossKind(config.loss).sty and n_types else None

    @property
    def relation_head(self) -> RelationHead | None:
        """The trained relation parameters (None for synonym-only objectives)."""
        return None if self.relation is None else self.relation.head

    @property
    def needs_first_batch(self) -> bool:
        """TransE-MS measures λ_rel on the first batch (see :mod:`termnorm.losses.transe`)."""
        ready = getattr(self.relation, "lam_ready", None)
        return ready is not None and float(ready) < 0.5

    def forward(self, embeddings: torch.Tensor, batch: Batch) -> dict[str, torch.Tensor]:
        """Loss parts ``{"loss", "ms", ["rel"], ["sty"]}`` of float32 vectors ``[2k, d]``.

        The losses always run in float32, outside the caller's autocast (a bf16 cosine is off
        by up to 0.004, which β = 50 turns into ~20 % noise on each negative pair's weight,
        and bf16 cannot represent small updates of M_r ≈ I).
        """
        with torch.autocast(device_type=embeddings.device.type, enabled=False):
            return self._losses(embeddings, batch)

    def _losses(self, emb: torch.Tensor, batch: Batch) -> dict[str, torch.Tensor]:
        k = batch.k
        labels = batch.labels.to(emb.device)
        parts = {"ms": self.ms(emb, labels)}
        total = parts["ms"]
        if self.relation is not None:
            heads, tails = emb[:k], emb[k:]  # [k, d] each
            rel_idx = batch.rel_idx.to(emb.device)
            if isinstance(self.relation, TransEMarginLoss):
                corrupted = emb[batch.corrupted.to(emb.device)]  # [k, d]
                parts["rel"] = self.relation(heads, rel_idx, tails, corrupted)
            else:
                parts["rel"] = self.relation(heads, rel_idx, tails, labels[k:])
            total = total + self.rel_weight * parts["rel"]
        if self.sty is not None and batch.sty is not None:
            parts["sty"] = self.sty(emb, batch.sty)
            total = total + self.sty_weight * parts["sty"]
        parts["loss"] = total
        return parts

    def save(self, folder: Path) -> None:
        """The relation head, when there is one (``relations/``, see RelationHead.save)."""
        if self.relation is not None:
            self.relation.head.save(folder)


def coder_sampler(config: TrainConfig, kg: KnowledgeGraph) -> KGSampler:
    """The KG sampler of ``config`` (synonym-only objectives draw synonym groups only)."""
    c, s = config, config.sampler
    return KGSampler(
        kg,
        c.k,
        s.m,
        s.synonym_share if LossKind(c.loss).relation else 1.0,
        s.lang_balanced,
        c.seed,
        hard_share=s.hard_share if s.hard_negatives else 0.0,
        hard_cluster=s.hard_cluster,
        with_types=LossKind(c.loss).sty,
        domain_share=s.domain_share if c.uses_domain_groups else 0.0,
        refresh_every=s.hard_refresh if s.hard_negatives else 0,
        refresh_neighbours=s.hard_neighbours,
        refresh_max_concepts=s.hard_max_concepts,
    )


def coder_parts(job: Job) -> Parts:
    """The parts of the CODER losses (``config.loss`` other than ``triplet`` and
    ``ms-v3``, see :mod:`termnorm.training.kge_margin`).

    ``mentions``: the ``(text, gold_ids)`` training mentions of ``--train-data od``; they
    become terms of their concepts. The model card describes the KG with them.
    """
    config, kg = job.config, job.kg
    kg = with_domain_terms(config, kg, job.mentions)  # data first: its errors come before the model
    encoder = job.encoder()[0]  # seeds torch; the heads init below
    sampler = coder_sampler(config, kg)
    if LossKind(config.loss).relation and sampler.n_triplets == 0:
        logger.warning(
            "the KG has no usable relation (%d in the table, none between concepts with "
            "terms): training synonym-only (MS loss)",
            len(kg.relations),
        )
    if LossKind(config.loss).sty and not sampler.type_labels:
        logger.warning("the KG has no semantic types: the STY loss is off")
    dim = int(encoder.model.config.hidden_size)
    objective = CoderObjective(dim, config, sampler.relation_labels, len(sampler.type_labels))
    return Parts(sampler, objective, kg)


coder_trainer = composition(coder_parts)
