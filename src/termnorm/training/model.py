"""The model a run trains: the start encoder on this process's device, and the one module DDP
wraps (transformer + pooling + objective)."""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from termnorm.encoders import TermEncoder
from termnorm.encoders.markers import mention_mask
from termnorm.encoders.pooling import Pooling, pool
from termnorm.training.config import TrainConfig
from termnorm.training.distributed import DistInfo, init_distributed
from termnorm.training.protocols import Objective, TokenObjective

__all__ = ["EncoderAndObjective", "load_base_encoder"]


def load_base_encoder(
    config: TrainConfig, dist_info: DistInfo | None = None
) -> tuple[TermEncoder, DistInfo]:
    """The start model of a run on this process's device, and that place in the job.

    Sets torch's CPU threads (``config.threads``) and seeds torch with ``config.seed`` before
    loading, so that the objective's heads, built right after, start from the same numbers
    in every run with that seed.
    """
    info = dist_info or init_distributed(config.device)
    if config.threads:
        torch.set_num_threads(config.threads)
    torch.manual_seed(config.seed)
    encoder = TermEncoder.load(config.base_model, config.pooling, config.max_length, info.device)
    return encoder, info


class EncoderAndObjective(nn.Module):
    """Transformer + pooling + objective: the one module DDP wraps (tokens, batch → parts).

    Texts with mention markers are pooled over the mention (``markers``, see
    :mod:`termnorm.encoders.markers`); a :class:`TokenObjective` runs the model itself.
    """

    def __init__(
        self,
        model: nn.Module,
        pooling: Pooling,
        objective: Objective,
        markers: tuple[int, int] | None = None,
    ) -> None:
        super().__init__()
        self.model = model
        self.pooling = pooling
        self.objective = objective
        self.markers = markers

    def forward(self, tokens: dict[str, torch.Tensor], batch: Any) -> dict[str, torch.Tensor]:
        if isinstance(self.objective, TokenObjective):
            return self.objective.forward_tokens(self.model, tokens, batch)
        hidden = self.model(**tokens).last_hidden_state  # [N, T, d]
        mask = mention_mask(tokens["input_ids"], tokens["attention_mask"], self.markers)
        emb = pool(hidden, mask, self.pooling).float()  # [N, d]
        if self.objective.needs_cls:  # the first token's vectors [N, H] too
            parts: dict[str, torch.Tensor] = self.objective(emb, batch, cls=hidden[:, 0].float())
        else:
            parts = self.objective(emb, batch)
        return parts
