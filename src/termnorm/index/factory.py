"""Turn a :class:`BackendSpec` into a :class:`VectorIndex`, and read one back from disk."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np

from termnorm.index.base import Backend, VectorIndex
from termnorm.index.choose import BackendSpec, choose_backend, default_memory_budget
from termnorm.index.exact import ExactIndex
from termnorm.index.faiss_backend import DEFAULT_PARAMS, FaissIndex, import_faiss

__all__ = ["build_vector_index", "faiss_installed", "load_vector_index", "resolve_backend"]


def faiss_installed() -> bool:
    """Whether the optional ``faiss`` package can be imported."""
    return importlib.util.find_spec("faiss") is not None


def resolve_backend(
    backend: Backend | str,
    n_vectors: int,
    dim: int,
    memory_budget: int | None = None,
) -> BackendSpec:
    """``auto`` → :func:`choose_backend`; a named backend → that one with default parameters.

    A named faiss backend without faiss installed raises ``MissingExtraError`` here, before
    any encoding work starts.
    """
    kind = Backend(backend)
    if kind is Backend.AUTO:
        budget = default_memory_budget() if memory_budget is None else memory_budget
        return choose_backend(n_vectors, dim, budget, faiss_available=faiss_installed())
    if kind.is_faiss:
        import_faiss()
    return BackendSpec(kind, dict(DEFAULT_PARAMS.get(kind, {})), "chosen by the user")


def build_vector_index(spec: BackendSpec, vectors: np.ndarray) -> VectorIndex:
    """A ``spec`` index holding ``vectors`` (exact wraps them without copying)."""
    if spec.backend is Backend.EXACT:
        return ExactIndex.from_vectors(vectors)
    index = FaissIndex(int(vectors.shape[1]), spec.backend, **spec.params)
    index.add(vectors)
    return index


def load_vector_index(spec: BackendSpec, folder: Path, vectors: np.ndarray) -> VectorIndex:
    """Reopen a saved index: exact wraps ``vectors``; faiss reads ``folder``."""
    if spec.backend is Backend.EXACT:
        return ExactIndex.from_vectors(vectors)
    return FaissIndex.load(folder)
