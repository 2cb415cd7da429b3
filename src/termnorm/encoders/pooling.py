"""Pooling of token states into one term vector.

``cls``:  e = h_[CLS]                                  (CODER's e)
``mean``: e_avg = Σ_t m_t h_t / Σ_t m_t  over non-pad tokens (CODER's e_avg; MiniLM's default)
"""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # torch is imported by the caller; the enum stays import-free
    import torch


class Pooling(str, Enum):
    """How token states become one vector."""

    CLS = "cls"
    MEAN = "mean"


def pool(hidden: torch.Tensor, attention_mask: torch.Tensor, pooling: Pooling) -> torch.Tensor:
    """Pool ``hidden`` [B, T, H] with ``attention_mask`` [B, T] into [B, H]."""
    if pooling is Pooling.CLS:
        return hidden[:, 0]
    mask = attention_mask.unsqueeze(-1).to(hidden.dtype)  # [B, T, 1]
    return (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
