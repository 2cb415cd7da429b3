"""Which index backend to use: a pure function of size, dimension and memory budget.

Rules, in order (after autofaiss' ``optimize.py``); "fits" means the backend's estimated
resident bytes (:func:`estimate_bytes`) are within the budget:

1. at most :data:`EXACT_MAX_VECTORS` vectors and the float32 matrix fits → ``exact``, held
   in RAM as float32 (``resident=1``);
2. faiss not installed → ``exact``, resident when the float32 matrix fits, else streamed:
   blocked search over the memory-mapped float16 file (``resident=0``);
3. the float32 matrix fits and at most :data:`FLAT_MAX_VECTORS` vectors → ``faiss-flat``;
4. an HNSW graph fits → ``faiss-hnsw``;
5. fewer than :data:`IVFPQ_MIN_VECTORS` vectors (too few to train IVF-PQ) → ``exact``
   (resident or streamed as in 2);
6. otherwise IVF-PQ with about ``4 sqrt(n)`` lists and the largest PQ code that fits:
   ``faiss-ivfpq`` (flat coarse quantizer), or ``faiss-ivf-hnsw`` from
   :data:`IVF_HNSW_MIN_LISTS` lists on (an HNSW graph finds the lists to probe); none fits →
   ``ValueError`` naming the budget needed.

Approximate backends re-score their candidates against the float16 vectors memory-mapped
from disk (pages read on demand); those pages are not counted in the estimate.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field
from typing import Any

from termnorm.index.base import Backend
from termnorm.index.exact import DEFAULT_BLOCK_BYTES
from termnorm.index.faiss_backend import DEFAULT_PARAMS, POINTS_PER_CENTROID

__all__ = [
    "EXACT_MAX_VECTORS",
    "FLAT_MAX_VECTORS",
    "IVFPQ_MIN_VECTORS",
    "IVF_HNSW_MIN_LISTS",
    "BackendSpec",
    "choose_backend",
    "default_memory_budget",
    "estimate_bytes",
    "exact_spec",
    "parse_bytes",
]

EXACT_MAX_VECTORS = 250_000
FLAT_MAX_VECTORS = 2_000_000
IVFPQ_MIN_VECTORS = 20_000
IVF_HNSW_MIN_LISTS = 1 << 14
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
    """Approximate resident size of an index (vectors, graph links, codes, centroids).

    A streamed exact index (``resident=0``) holds one working block
    (:data:`termnorm.index.exact.DEFAULT_BLOCK_BYTES`); its file is paged in by the OS.
    """
    if backend is Backend.EXACT:
        return 4 * n_vectors * dim if params.get("resident", 1) else DEFAULT_BLOCK_BYTES
    if backend is Backend.FAISS_FLAT:
        return 4 * n_vectors * dim
    if backend is Backend.FAISS_HNSW:
        return n_vectors * (4 * dim + 2 * 4 * params["m"])
    if backend.is_ivf:
        nlist = params["nlist"]
        codebooks = 4 * (1 << params.get("nbits", 8)) * dim
        codes = n_vectors * (params["m"] + 8) + 4 * nlist * dim + codebooks
        if backend is Backend.FAISS_IVF_HNSW:
            codes += nlist * 2 * 4 * params.get("hnsw_m", 32)
        return codes
    raise ValueError(f"no size estimate for {backend.value}")


def exact_spec(n_vectors: int, dim: int, budget: int, reason: str) -> BackendSpec:
    """Exact search, held as float32 when that fits ``budget``, else streamed from disk."""
    resident = int(estimate_bytes(Backend.EXACT, n_vectors, dim, {"resident": 1}) <= budget)
    how = "float32 in RAM" if resident else "streamed from the float16 file"
    return BackendSpec(Backend.EXACT, {"resident": resident}, f"{reason} ({how})")


def choose_backend(
    n_vectors: int,
    dim: int,
    memory_budget_bytes: int,
    faiss_available: bool = True,
) -> BackendSpec:
    """The backend for ``n_vectors`` vectors of size ``dim`` within ``memory_budget_bytes``."""
    if n_vectors < 0 or dim < 1 or memory_budget_bytes < 0:
        raise ValueError("n_vectors, dim and memory_budget_bytes must be non-negative (dim > 0)")
    budget = memory_budget_bytes
    fits_flat = estimate_bytes(Backend.FAISS_FLAT, n_vectors, dim, {}) <= budget
    if n_vectors <= EXACT_MAX_VECTORS and fits_flat:
        return exact_spec(n_vectors, dim, budget, f"{n_vectors} vectors fit exact search")
    if not faiss_available:
        return exact_spec(n_vectors, dim, budget, "faiss not installed")
    if fits_flat and n_vectors <= FLAT_MAX_VECTORS:
        return BackendSpec(Backend.FAISS_FLAT, {}, "vectors fit in memory; faiss flat is exact")
    hnsw = dict(DEFAULT_PARAMS[Backend.FAISS_HNSW])
    if estimate_bytes(Backend.FAISS_HNSW, n_vectors, dim, hnsw) <= budget:
        return BackendSpec(Backend.FAISS_HNSW, hnsw, "too many vectors for flat; HNSW fits")
    if n_vectors < IVFPQ_MIN_VECTORS:
        return exact_spec(n_vectors, dim, budget, "too few vectors to train IVF-PQ")
    nlist = _ivf_lists(n_vectors)
    kind = Backend.FAISS_IVF_HNSW if nlist >= IVF_HNSW_MIN_LISTS else Backend.FAISS_IVFPQ
    base = DEFAULT_PARAMS[kind]
    for m in sorted((d for d in range(1, dim + 1) if dim % d == 0), reverse=True):
        if m > MAX_PQ_SUBQUANTIZERS:
            continue
        params = {**base, "nlist": nlist, "m": m}
        if estimate_bytes(kind, n_vectors, dim, params) <= budget:
            lists = "an HNSW graph over the lists" if kind is Backend.FAISS_IVF_HNSW else "flat"
            return BackendSpec(
                kind, params, f"memory is tight; {nlist} lists ({lists}), PQ{m} codes fit"
            )
    need = estimate_bytes(kind, n_vectors, dim, {**base, "nlist": nlist, "m": 1})
    raise ValueError(
        f"a memory budget of {budget} bytes is too small for {n_vectors} vectors "
        f"of dimension {dim}; give at least {need} bytes (--memory-budget)"
    )
