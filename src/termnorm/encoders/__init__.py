"""Text → vectors: transformer encoders with CLS or mean pooling (names resolve lazily)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from termnorm._lazy import lazy_getattr

if TYPE_CHECKING:  # pragma: no cover
    from termnorm.encoders.memo import MemoEncoder
    from termnorm.encoders.pooling import Pooling, pool
    from termnorm.encoders.transformer import DEFAULT_MAX_LENGTH, TermEncoder, default_model_path

__all__ = [
    "DEFAULT_MAX_LENGTH",
    "MemoEncoder",
    "Pooling",
    "TermEncoder",
    "default_model_path",
    "pool",
]

__getattr__ = lazy_getattr(
    __name__,
    {
        "MemoEncoder": "memo",
        "Pooling": "pooling",
        "pool": "pooling",
        "DEFAULT_MAX_LENGTH": "transformer",
        "TermEncoder": "transformer",
        "default_model_path": "transformer",
    },
)
