"""The shapes the encoder's helper modules share: a :class:`Forward` and what fidelity, the
forward passes, the markers and the ONNX export read of an encoder (:class:`EncoderModel`,
which :class:`~termnorm.encoders.TermEncoder` is), so they need not import the module that
imports them."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np

if TYPE_CHECKING:
    import torch
    from torch import nn
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

    from termnorm.encoders.pooling import Pooling

__all__ = ["EncoderModel", "Forward"]


class Forward(Protocol):
    """``inputs`` (int64 ``[B, T]`` arrays by name) → ``[B, d]`` unit float32 vectors."""

    def __call__(self, inputs: dict[str, np.ndarray]) -> np.ndarray: ...


class EncoderModel(Protocol):
    """A transformer with its tokenizer, pooling and head on a device (a ``TermEncoder``)."""

    model: PreTrainedModel
    tokenizer: PreTrainedTokenizerBase
    pooling: Pooling
    head: nn.Sequential
    device: torch.device
    path: Path | None
    markers: tuple[int, int] | None

    @property
    def fingerprint(self) -> str:
        """Identity of weights + pooling."""
        ...

    def tokenize(self, texts: Sequence[str]) -> dict[str, torch.Tensor]:
        """Padded tensors on the encoder's device."""
        ...

    def pooling_mask(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        """The tokens each row is pooled over ``[B, T]``."""
        ...

    def reset_fingerprint(self) -> None:
        """Forget the folder identity after an in-memory change."""
        ...

    def encode_with(
        self,
        forward: Forward,
        texts: Sequence[str],
        batch_size: int = ...,
        show_progress: bool = ...,
        desc: str = ...,
    ) -> np.ndarray:
        """Unit vectors ``[len(texts), d]`` from ``forward``."""
        ...
