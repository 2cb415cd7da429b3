"""The training objective: encoder + losses in one module (what DDP wraps).

``CoderModel(tokens, batch)`` embeds the batch's 2k terms and returns the loss parts::

    loss = L_MS(e_1..e_2k; concepts)
         + μ · L_rel(heads e_1..e_k, relations, tails e_k+1..e_2k)   (coder, transe, transe-margin)
         + w_sty · L_sty(e_1..e_2k; semantic types)                   (+sty objectives)
"""

from __future__ import annotations

import torch
from torch import nn
from transformers import PreTrainedModel

from termnorm.encoders.pooling import Pooling, pool
from termnorm.losses import (
    MultiSimilarityLoss,
    RelationHead,
    RelationKind,
    RelationLoss,
    SemanticTypeLoss,
    TransEMarginLoss,
    TransEMSLoss,
)
from termnorm.training.config import TrainConfig
from termnorm.training.sampler import Batch

__all__ = ["CoderModel"]


class CoderModel(nn.Module):
    """Transformer + pooling + the configured losses.

    Args:
        model: the Hugging Face transformer (shared with the :class:`TermEncoder`).
        pooling: ``cls`` or ``mean``.
        config: the run's configuration (loss kind and weights).
        relation_labels: relation labels of the sampler (index order).
        n_types: number of semantic types (0 = no STY loss).
    """

    def __init__(
        self,
        model: PreTrainedModel,
        pooling: Pooling,
        config: TrainConfig,
        relation_labels: list[str],
        n_types: int = 0,
    ) -> None:
        super().__init__()
        self.model = model
        self.pooling = pooling
        self.ms = MultiSimilarityLoss()
        self.rel_weight = config.rel_weight_value
        self.sty_weight = config.sty_weight
        dim = int(model.config.hidden_size)
        kind = config.loss.relation
        self.relation: nn.Module | None = None
        if kind == "matrix" and relation_labels:
            self.relation = RelationLoss(RelationHead(relation_labels, dim, RelationKind.MATRIX))
        elif kind == "transe" and relation_labels:
            self.relation = TransEMSLoss(RelationHead(relation_labels, dim, RelationKind.TRANSE))
        elif kind == "transe-margin" and relation_labels:
            self.relation = TransEMarginLoss(
                RelationHead(relation_labels, dim, RelationKind.TRANSE), config.transe_margin
            )
        self.sty = SemanticTypeLoss(dim, n_types) if config.loss.sty and n_types else None

    @property
    def relation_head(self) -> RelationHead | None:
        """The trained relation parameters (None for synonym-only objectives)."""
        return None if self.relation is None else self.relation.head  # type: ignore[return-value]

    def head_parameters(self) -> list[nn.Parameter]:
        """Parameters of the relation and STY heads (their own learning rate)."""
        out: list[nn.Parameter] = []
        for part in (self.relation, self.sty):
            if part is not None:
                out += list(part.parameters())
        return out

    def embed(self, tokens: dict[str, torch.Tensor]) -> torch.Tensor:
        """Pooled, un-normalised term vectors [N, d]."""
        hidden = self.model(**tokens).last_hidden_state  # [N, T, d]
        return pool(hidden, tokens["attention_mask"], self.pooling)

    def forward(self, tokens: dict[str, torch.Tensor], batch: Batch) -> dict[str, torch.Tensor]:
        """Loss parts ``{"loss", "ms", ["rel"], ["sty"]}`` for one batch.

        The encoder runs under the caller's autocast; the losses always run in float32
        (a bf16 cosine is off by up to 0.004, which β = 50 turns into ~20 % noise on each
        negative pair's weight, and bf16 cannot represent small updates of M_r ≈ I).
        """
        emb = self.embed(tokens).float()  # [2k, d]
        with torch.autocast(device_type=emb.device.type, enabled=False):
            return self._losses(emb, batch)

    def _losses(self, emb: torch.Tensor, batch: Batch) -> dict[str, torch.Tensor]:
        """The loss parts of float32 term vectors ``[2k, d]`` (heads, then tails)."""
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
