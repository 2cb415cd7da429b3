"""Pooling of token states h_1..h_T (mask m_t: 1 = token, 0 = padding) into one term vector.

The modes are sentence-transformers' ``Pooling`` modes, computed as it computes them:

``cls``:          e = h_f, f the first non-pad token        (CODER's e; [CLS] with right padding)
``mean``:         e = Σ_t m_t h_t / Σ_t m_t                 (CODER's e_avg; MiniLM's default)
``max``:          e_j = max_{t: m_t = 1} h_tj
``mean_sqrt_len_tokens``: e = Σ_t m_t h_t / √(Σ_t m_t)
``weightedmean``: e = Σ_t w_t m_t h_t / Σ_t w_t m_t, w_t = t − f + 1 (later tokens weigh more)
``lasttoken``:    e = h_l, l the last non-pad token          (decoder embedders)

The enum is import-free so that the CLI can offer its values without loading torch.
"""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # torch is imported by the caller; the enum stays import-free
    import torch

__all__ = ["Pooling", "pool"]


class Pooling(str, Enum):
    """How token states become one vector (values are sentence-transformers' mode names)."""

    CLS = "cls"
    MEAN = "mean"
    MAX = "max"
    MEAN_SQRT_LEN = "mean_sqrt_len_tokens"
    WEIGHTED_MEAN = "weightedmean"
    LAST_TOKEN = "lasttoken"


def pool(
    hidden: torch.Tensor, attention_mask: torch.Tensor, pooling: Pooling | str
) -> torch.Tensor:
    """Pool ``hidden`` [B, T, H] with ``attention_mask`` [B, T] into [B, H] (see module doc)."""
    import torch

    mode = Pooling(pooling)
    if mode is Pooling.MEAN:
        mask = attention_mask.unsqueeze(-1).to(hidden.dtype)  # [B, T, 1]
        return (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
    rows = torch.arange(hidden.shape[0], device=hidden.device)  # [B]
    first = attention_mask.to(torch.int32).argmax(dim=1)  # [B]: 0 unless left-padded
    if mode is Pooling.CLS:
        return hidden[rows, first]
    mask = attention_mask.unsqueeze(-1).to(hidden.dtype)  # [B, T, 1]
    if mode is Pooling.MAX:
        return hidden.masked_fill(mask == 0, float("-inf")).max(dim=1).values
    if mode is Pooling.MEAN_SQRT_LEN:
        return (hidden * mask).sum(dim=1) / torch.sqrt(mask.sum(dim=1).clamp(min=1e-9))
    if mode is Pooling.WEIGHTED_MEAN:
        steps = torch.arange(1, hidden.shape[1] + 1, device=hidden.device, dtype=hidden.dtype)
        weights = mask * (steps.view(1, -1, 1) - first.view(-1, 1, 1))  # [B, T, 1]
        return (hidden * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1e-9)
    # LAST_TOKEN
    length = hidden.shape[1]
    found, from_end = attention_mask.flip(1).max(dim=1)  # [B]
    from_end = torch.where(found == 0, length - 1, from_end)
    return (hidden * mask)[rows, length - 1 - from_end]
