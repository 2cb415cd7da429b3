"""The vector-index interface every backend implements, and the result it returns.

Contract: vectors are float32 rows, L2-normalised by the caller, so the inner product is the
cosine similarity. Vector ids are their positions in insertion order (``0 .. len-1``).
``search(queries, k)`` returns, per query, the ``k`` best ids by descending score; ties are
broken by the smaller id; when fewer than ``k`` vectors exist the row is padded with id ``-1``
and score ``-inf``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from enum import Enum
from pathlib import Path
from typing import NamedTuple

import numpy as np

__all__ = ["PAD_ID", "PAD_SCORE", "Backend", "SearchResult", "VectorIndex", "as_matrix"]

PAD_ID = -1
PAD_SCORE = float("-inf")


class Backend(str, Enum):
    """Index backends; ``auto`` lets :func:`termnorm.index.choose_backend` decide."""

    AUTO = "auto"
    EXACT = "exact"
    FAISS_FLAT = "faiss-flat"
    FAISS_HNSW = "faiss-hnsw"
    FAISS_IVFPQ = "faiss-ivfpq"
    FAISS_IVF_HNSW = "faiss-ivf-hnsw"

    @property
    def is_ivf(self) -> bool:
        """Whether this backend is trained (inverted lists of PQ codes)."""
        return self in (Backend.FAISS_IVFPQ, Backend.FAISS_IVF_HNSW)

    @property
    def is_faiss(self) -> bool:
        """Whether this backend needs the ``faiss`` extra."""
        return self.value.startswith("faiss")


class SearchResult(NamedTuple):
    """Top-k per query: ``scores`` float32 ``[q, k]`` (descending), ``ids`` int64 ``[q, k]``."""

    scores: np.ndarray
    ids: np.ndarray

    @classmethod
    def empty(cls, n_queries: int, k: int) -> SearchResult:
        """A result of ``n_queries`` rows holding only padding."""
        return cls(
            np.full((n_queries, k), PAD_SCORE, dtype=np.float32),
            np.full((n_queries, k), PAD_ID, dtype=np.int64),
        )


def as_matrix(vectors: np.ndarray, dimension: int | None = None) -> np.ndarray:
    """``vectors`` as a C-contiguous float32 ``[n, d]`` array (checked against ``dimension``)."""
    arr = np.ascontiguousarray(vectors, dtype=np.float32)
    if arr.ndim == 1:
        arr = arr.reshape(1, -1)
    if arr.ndim != 2:
        raise ValueError(f"expected a [n, d] matrix, got shape {arr.shape}")
    if dimension is not None and arr.shape[1] != dimension:
        raise ValueError(f"expected vectors of dimension {dimension}, got {arr.shape[1]}")
    return arr


class VectorIndex(ABC):
    """A store of vectors searchable by inner product: ``add``, ``search``, ``save``, ``load``."""

    backend: Backend

    def __init__(self, dimension: int) -> None:
        self.dimension = dimension

    @abstractmethod
    def __len__(self) -> int:
        """Number of vectors added."""

    @property
    @abstractmethod
    def nbytes(self) -> int:
        """Bytes the searchable structure holds (vectors or codes, links, centroids)."""

    @abstractmethod
    def add(self, vectors: np.ndarray) -> None:
        """Append ``vectors`` ``[n, d]``; they get ids ``len(self) .. len(self) + n - 1``."""

    @abstractmethod
    def search(self, queries: np.ndarray, k: int) -> SearchResult:
        """Top-``k`` ids and scores for each row of ``queries`` ``[q, d]``."""

    @abstractmethod
    def save(self, folder: Path) -> None:
        """Write the index into ``folder`` (created if needed)."""

    @classmethod
    @abstractmethod
    def load(cls, folder: Path) -> VectorIndex:
        """Read an index written by :meth:`save`."""
