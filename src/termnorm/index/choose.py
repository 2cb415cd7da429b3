"""Which index backend to use: a pure function of size, dimension and memory budget.

Rules, in order (after autofaiss' ``optimize.py``); "fits" means the backend's estimated
resident bytes are within the budget:

1. at most :data:`EXACT_MAX_VECTORS` vectors and the float32 matrix fits → ``exact``;
2. faiss not installed → ``exact`` (blocked search streams a memory-mapped matrix);
3. the float32 matrix fits and at most :data:`FLAT_MAX_VECTORS` vectors → ``faiss-flat``;
4. an HNSW graph fits → ``faiss-hnsw``;
5. fewer than :data:`IVFPQ_MIN_VECTORS` vectors (too few to train IVF-PQ) → ``exact``;
6. otherwise ``faiss-ivfpq`` with the largest PQ code that fits; none fits → ``ValueError``.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field
from typing import Any

from termnorm.index.base import Backend
from termnorm.index.faiss_backend import DEFAULT_PARAMS, POINTS_PER_CENTROID

__all__ = [
    "EXACT_MAX_VECTORS",
    "FLAT_MAX_VECTORS",
    "IVFPQ_MIN_VECTORS",
    "BackendSpec",
    "choose_backend",
    "default_memory_budget",
    "estimate_bytes",
    "parse_bytes",
]

EXACT_MAX_VECTORS = 250_000
FLAT_MAX_VECTORS = 2_000_000
IVFPQ_MIN_VECTORS = 20_000
MAX_PQ_SUBQUANTIZERS = 64
_UNITS = {"": 1, "B": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


@dataclass(frozen=True)
class BackendSpec:
    """A backend, its construction parameters, and why it was chosen."""

    backend: Backend
    params: dict[str, int] = field(default_factory=dict)
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (stored in ``index.json``)."""
        return {"backend": self.backend.value, "params": dict(self.params), "reason": self.reason}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> BackendSpec:
        """Inverse of :meth:`to_dict`."""
        return cls(Backend(data["backend"]), dict(data.get("params", {})), data.get("reason", ""))


def parse_bytes(size: str | int) -> int:
    """``"4GB"``, ``"512MiB"``, ``"1.5g"`` or ``123`` → bytes (units are powers of 1024)."""
    if isinstance(size, int):
        return size
    match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([kmgtb]?)(?:i?b)?\s*", size.lower())
    if not match:
        raise ValueError(f"cannot read {size!r} as a size; write e.g. 4GB, 512MB or 1000000")
    return int(float(match.group(1)) * _UNITS[match.group(2).upper()])


def default_memory_budget() -> int:
    """Half of this machine's physical memory (4 GiB when it cannot be read)."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")) // 2
    except (ValueError, OSError, AttributeError):
        return 4 << 30


def _ivf_lists(n_vectors: int) -> int:
    """About ``4 sqrt(n)`` inverted lists, a power of two, trainable with ``n`` vectors."""
    nlist = 2 ** round(math.log2(max(1.0, 4 * math.sqrt(n_vectors))))
    return int(max(1, min(nlist, 1 << 16, n_vectors // POINTS_PER_CENTROID)))


def estimate_bytes(backend: Backend, n_vectors: int, dim: int, params: dict[str, int]) -> int:
    """Approximate resident size of an index (vectors, graph links, codes, centroids)."""
    if backend in (Backend.EXACT, Backend.FAISS_FLAT):
        return 4 * n_vectors * dim
    if backend is Backend.FAISS_HNSW:
        return n_vectors * (4 * dim + 2 * 4 * params["m"])
    if backend is Backend.FAISS_IVFPQ:
        return n_vectors * (params["m"] + 8) + 4 * params["nlist"] * dim
    raise ValueError(f"no size estimate for {backend.value}")


def choose_backend(
    n_vectors: int,
    dim: int,
    memory_budget_bytes: int,
    faiss_available: bool = True,
) -> BackendSpec:
    """The backend for ``n_vectors`` vectors of size ``dim`` within ``memory_budget_bytes``."""
    if n_vectors < 0 or dim < 1 or memory_budget_bytes < 0:
        raise ValueError("n_vectors, dim and memory_budget_bytes must be non-negative (dim > 0)")
    flat = estimate_bytes(Backend.EXACT, n_vectors, dim, {})
    fits_flat = flat <= memory_budget_bytes
    if n_vectors <= EXACT_MAX_VECTORS and fits_flat:
        return BackendSpec(Backend.EXACT, {}, f"{n_vectors} vectors fit exact search")
    if not faiss_available:
        return BackendSpec(Backend.EXACT, {}, "faiss not installed; exact search streams blocks")
    if fits_flat and n_vectors <= FLAT_MAX_VECTORS:
        return BackendSpec(Backend.FAISS_FLAT, {}, "vectors fit in memory; faiss flat is exact")
    hnsw = dict(DEFAULT_PARAMS[Backend.FAISS_HNSW])
    if estimate_bytes(Backend.FAISS_HNSW, n_vectors, dim, hnsw) <= memory_budget_bytes:
        return BackendSpec(Backend.FAISS_HNSW, hnsw, "too many vectors for flat; HNSW fits")
    if n_vectors < IVFPQ_MIN_VECTORS:
        return BackendSpec(Backend.EXACT, {}, "too few vectors to train IVF-PQ; exact streams")
    nlist = _ivf_lists(n_vectors)
    base = DEFAULT_PARAMS[Backend.FAISS_IVFPQ]
    for m in sorted((d for d in range(1, dim + 1) if dim % d == 0), reverse=True):
        if m > MAX_PQ_SUBQUANTIZERS:
            continue
        params = {"nlist": nlist, "m": m, "nbits": base["nbits"], "nprobe": base["nprobe"]}
        if estimate_bytes(Backend.FAISS_IVFPQ, n_vectors, dim, params) <= memory_budget_bytes:
            return BackendSpec(Backend.FAISS_IVFPQ, params, f"memory is tight; PQ{m} codes fit")
    need = estimate_bytes(Backend.FAISS_IVFPQ, n_vectors, dim, {"nlist": nlist, "m": 1})
    raise ValueError(
        f"a memory budget of {memory_budget_bytes} bytes is too small for {n_vectors} vectors "
        f"of dimension {dim}; give at least {need} bytes (--memory-budget)"
    )
