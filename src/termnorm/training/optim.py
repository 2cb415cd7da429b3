"""Optimizer, schedule, precision and freezing helpers of the trainer.

AdamW over two parameter groups (encoder; relation/STY heads with their own learning rate),
no weight decay on biases and LayerNorm weights, and a linear warm-up to the peak learning rate
followed by a linear decay to zero (CODER §4.2).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from pathlib import Path

import torch
from torch import nn
from torch.optim.lr_scheduler import LambdaLR

from termnorm.training.config import Precision, TrainConfig

logger = logging.getLogger(__name__)

__all__ = ["autocast", "build_optimizer", "build_scheduler", "freeze", "resolve_precision"]


def _cpu_has_bf16() -> bool:
    """Whether this CPU has native bf16 arithmetic (AVX-512-BF16 or AMX)."""
    check = getattr(torch.cpu, "_is_avx512_bf16_supported", None)
    if check is not None:
        with contextlib.suppress(Exception):
            if check():
                return True
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        flags = cpuinfo.read_text(errors="ignore")
        return "avx512_bf16" in flags or "amx_bf16" in flags
    return False


def resolve_precision(precision: Precision, device: torch.device) -> torch.dtype | None:
    """Autocast dtype for ``precision`` on ``device`` (``None`` = fp32, no autocast)."""
    if precision is Precision.FP32:
        return None
    if precision is Precision.BF16:
        return torch.bfloat16
    if precision is Precision.FP16:
        return torch.float16
    if device.type == "cuda":
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    return torch.bfloat16 if _cpu_has_bf16() else None


@contextlib.contextmanager
def autocast(device: torch.device, dtype: torch.dtype | None) -> Iterator[None]:
    """``torch.autocast`` for ``dtype`` on ``device``; nothing when ``dtype`` is None."""
    if dtype is None:
        yield
        return
    with torch.autocast(device_type=device.type, dtype=dtype):
        yield


def freeze(model: nn.Module, embeddings: bool, layers: int) -> int:
    """Freeze the embeddings and/or the lowest ``layers`` transformer layers; return #frozen.

    Works for BERT-like models (``.embeddings``, ``.encoder.layer``).
    """
    base = getattr(model, "base_model", model)
    blocks = getattr(getattr(base, "encoder", None), "layer", None)
    if (embeddings and not hasattr(base, "embeddings")) or (layers and blocks is None):
        raise ValueError(
            f"cannot freeze parts of {type(base).__name__}: freezing needs a BERT-like model "
            "with .embeddings and .encoder.layer; use --freeze-layers 0 and no "
            "--freeze-embeddings"
        )
    if blocks is not None and layers > len(blocks):
        raise ValueError(f"--freeze-layers {layers} exceeds the model's {len(blocks)} layers")
    if embeddings and blocks is not None and layers == len(blocks):
        raise ValueError(
            f"--freeze-embeddings with --freeze-layers {layers} freezes every layer of this "
            f"{len(blocks)}-layer model, leaving nothing to train; lower --freeze-layers"
        )
    parts: list[nn.Module] = [base.embeddings] if embeddings else []  # type: ignore[list-item]
    parts += list(blocks[:layers]) if layers and blocks is not None else []
    n = 0
    for part in parts:
        for p in part.parameters():
            p.requires_grad_(False)
            n += p.numel()
    return n


def build_optimizer(
    encoder: nn.Module, heads: list[nn.Parameter], config: TrainConfig
) -> torch.optim.AdamW:
    """AdamW: encoder weights (decayed), biases/LayerNorm (not decayed), heads (own lr)."""
    decay: list[nn.Parameter] = []
    no_decay: list[nn.Parameter] = []
    for name, p in encoder.named_parameters():
        if not p.requires_grad:
            continue
        (no_decay if p.ndim < 2 or "LayerNorm" in name or "norm" in name else decay).append(p)
    groups: list[dict[str, object]] = [
        {"params": decay, "weight_decay": config.weight_decay},
        {"params": no_decay, "weight_decay": 0.0},
    ]
    if heads:
        groups.append(
            {
                "params": heads,
                "weight_decay": 0.0,
                "lr": config.lr if config.relation_lr is None else config.relation_lr,
            }
        )
    return torch.optim.AdamW(groups, lr=config.lr)  # type: ignore[arg-type]


def build_scheduler(optimizer: torch.optim.Optimizer, warmup: int, total: int) -> LambdaLR:
    """Linear warm-up over ``warmup`` steps, then linear decay to 0 at ``total``."""

    def factor(step: int) -> float:
        if step < warmup:
            return (step + 1) / max(1, warmup)
        return max(0.0, (total - step) / max(1, total - warmup))

    return LambdaLR(optimizer, factor)
