"""termnorm: knowledge-infused medical term embeddings and concept normalization.

The public API is a set of thin functions over lazily built objects (see :mod:`termnorm.api`);
importing this package does no work (no model, index or terminology is loaded).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = [
    "__version__",
    "build_index",
    "load_index",
    "load_kg",
    "normalize",
    "normalize_file",
    "train",
]

if TYPE_CHECKING:  # pragma: no cover
    from termnorm.api import build_index, load_index, load_kg, normalize, normalize_file, train


def __getattr__(name: str) -> Any:
    """Resolve the API functions lazily so that ``import termnorm`` stays cheap."""
    if name in {"build_index", "load_index", "load_kg", "normalize", "normalize_file", "train"}:
        from termnorm import api

        return getattr(api, name)
    raise AttributeError(f"module 'termnorm' has no attribute {name!r}")
