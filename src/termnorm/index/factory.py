"""Turn a :class:`BackendSpec` into a :class:`VectorIndex`, and read one back from disk.

Builds stream: vectors (float16 or float32, in memory, memory-mapped or
:class:`~termnorm.index.vectors.NpyRows`) go to the backend one block of
:data:`~termnorm.index.vectors.DEFAULT_BLOCK_ROWS` rows at a time, converted to float32 per
block; IVF kinds are first trained on a sample of evenly spaced row runs. No full float32 copy
is made except where the backend itself stores float32 (faiss flat and HNSW, and an exact
index held resident).
"""

from __future__ import annotations

import importlib.util
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from termnorm.index.base import Backend, VectorIndex
from termnorm.index.choose import (
    BackendSpec,
    choose_backend,
    default_memory_budget,
    estimate_bytes,
    exact_spec,
)
from termnorm.index.exact import ExactIndex
from termnorm.index.faiss_backend import DEFAULT_PARAMS, FaissIndex, import_faiss
from termnorm.index.vectors import DEFAULT_BLOCK_ROWS, iter_blocks

__all__ = [
    "TRAIN_POINTS_PER_LIST",
    "build_vector_index",
    "faiss_installed",
    "load_vector_index",
    "resolve_backend",
    "training_sample",
]

logger = logging.getLogger(__name__)

TRAIN_POINTS_PER_LIST = 64
"""IVF training sample: this many rows per inverted list (faiss needs >= 39), and at least
:data:`MIN_TRAIN_POINTS` for the PQ codebooks (256 centroids per sub-quantizer)."""
MIN_TRAIN_POINTS = 256 * 64
TRAIN_RUNS = 64  # the sample is this many evenly spaced runs of consecutive rows

OnBlock = Callable[[int, np.ndarray], None]


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

    ``memory_budget`` (bytes; ``None``: half of this machine's memory) is honoured by a named
    backend too: ``exact`` streams from disk when its float32 matrix would not fit, and a
    named faiss backend whose estimated size exceeds it is refused. A named faiss backend
    without faiss installed raises ``MissingExtraError`` here, before any encoding starts.
    """
    kind = Backend(backend)
    budget = default_memory_budget() if memory_budget is None else memory_budget
    if kind is Backend.AUTO:
        return choose_backend(n_vectors, dim, budget, faiss_available=faiss_installed())
    if kind is Backend.EXACT:
        return exact_spec(n_vectors, dim, budget, "chosen by the user")
    import_faiss()
    params = dict(DEFAULT_PARAMS.get(kind, {}))
    need = estimate_bytes(kind, n_vectors, dim, params)
    if need > budget:
        raise ValueError(
            f"--backend {kind.value} needs about {need / 2**20:,.0f} MiB for {n_vectors} vectors "
            f"of dimension {dim}, over the memory budget of {budget / 2**20:,.0f} MiB; raise "
            "--memory-budget or let --backend auto choose a smaller structure"
        )
    return BackendSpec(kind, params, "chosen by the user")


def training_sample(vectors: Any, size: int, runs: int = TRAIN_RUNS) -> np.ndarray:
    """About ``size`` float32 rows of ``vectors`` in ``runs`` evenly spaced runs of consecutive
    rows (all rows when ``size >= len(vectors)``); reads only those rows."""
    n = len(vectors)
    if size >= n:
        return np.concatenate([b for _, b in iter_blocks(vectors)])
    runs = max(1, min(runs, size))
    per_run = -(-size // runs)
    starts = np.linspace(0, n - per_run, runs).astype(np.int64)
    return np.concatenate(
        [np.asarray(vectors[s : s + per_run], dtype=np.float32) for s in starts.tolist()]
    )


def build_vector_index(
    spec: BackendSpec,
    vectors: Any,
    block_rows: int = DEFAULT_BLOCK_ROWS,
    on_block: OnBlock | None = None,
) -> VectorIndex:
    """A ``spec`` index holding ``vectors`` ``[n, d]``, added block by block.

    ``exact`` wraps ``vectors`` without copying (held as float32 when ``resident=1``);
    faiss backends get ``block_rows`` rows at a time (IVF kinds after training on
    :func:`training_sample`); ``on_block(first_row, float32_block)`` is called per block added.
    """
    if spec.backend is Backend.EXACT:
        exact = ExactIndex.from_vectors(vectors)
        return exact.resident() if spec.params.get("resident", 1) else exact
    index = FaissIndex(int(vectors.shape[1]), spec.backend, **spec.params)
    if spec.backend.is_ivf and len(vectors):
        size = max(MIN_TRAIN_POINTS, TRAIN_POINTS_PER_LIST * int(index.params["nlist"]))
        sample = training_sample(vectors, size)
        logger.info(
            "training %s on %d of %d vectors", spec.backend.value, len(sample), len(vectors)
        )
        index.train(sample)
        del sample
    for start, block in iter_blocks(vectors, block_rows):
        index.add(block)
        if on_block is not None:
            on_block(start, block)
    return index


def load_vector_index(spec: BackendSpec, folder: Path, vectors: np.ndarray) -> VectorIndex:
    """Reopen a saved index: exact wraps ``vectors`` (made resident as the spec says; cards
    without the flag keep the memory map); faiss reads ``folder``."""
    if spec.backend is Backend.EXACT:
        exact = ExactIndex.from_vectors(vectors)
        return exact.resident() if spec.params.get("resident", 0) else exact
    return FaissIndex.load(folder)
