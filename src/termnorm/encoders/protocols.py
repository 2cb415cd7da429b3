"""The shapes of an encoder that other modules type against, so that they need not import
``transformer.py`` (which imports them): :class:`Encoder` (what an index and the memo use),
:class:`Forward`, and :class:`EncoderModel` (what fidelity, the forward passes, the markers
and the ONNX export read; :class:`~termnorm.encoders.TermEncoder` is one)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np

if TYPE_CHECKING:
    import torch
    from torch import nn
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

    from termnorm.encoders.pooling import Pooling

__all__ = ["Encoder", "EncoderModel", "Forward"]


class Forward(Protocol):
    """``inputs`` (int64 ``[B, T]`` arrays by name) → ``[B, d]`` unit float32 vectors."""

    def __call__(self, inputs: dict[str, np.ndarray]) -> np.ndarray: ...


class Encoder(Protocol):
    """What an index builds with and a :class:`~termnorm.encoders.MemoEncoder` wraps: a
    ``TermEncoder``'s ``encode`` and identity."""

    @property
    def path(self) -> Path | None: ...

    @property
    def pooling(self) -> Pooling: ...

    @property
    def max_length(self) -> int: ...

    @property
    def fingerprint(self) -> str: ...

    @property
    def dimension(self) -> int: ...

    def encode(
        self,
        texts: Sequence[str],
        batch_size: int = ...,
        show_progress: bool = ...,
        desc: str = ...,
        on_batch: Callable[[int], None] | None = ...,
    ) -> np.ndarray:
        """Vectors ``[len(texts), d]``; ``on_batch(n)`` after each batch of ``n`` texts."""
        ...


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
