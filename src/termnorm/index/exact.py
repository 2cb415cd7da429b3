"""Exact inner-product search by blocked matrix products, with bounded memory.

For queries Q ``[q, d]`` and a database X ``[n, d]`` the scores are ``Q Xᵀ``; they are never
materialised whole: queries go in blocks of :data:`QUERY_BLOCK` rows and the database in
blocks sized so that one score block and its temporaries stay within ``block_bytes``. Each
block's top-k (``argpartition``) is merged into a running top-k. Ties are broken by the
smaller id, always, including ties that straddle the k-th place.

The database may be float16 (an index's stored vectors, :mod:`termnorm.index.vectors`): each
block is then converted to float32 before the product, and the block is also bounded so that
its float32 copy stays within ``block_bytes``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from termnorm.index.base import Backend, SearchResult, VectorIndex, as_matrix
from termnorm.index.vectors import STORAGE_DTYPE, iter_blocks

__all__ = [
    "DEFAULT_BLOCK_BYTES",
    "ExactIndex",
    "exact_search",
    "merge_results",
    "rerank_exact",
    "select_topk",
]

DEFAULT_BLOCK_BYTES = 64 << 20
"""Working memory of one score block (queries x database rows) during exact search."""
QUERY_BLOCK = 1024
# float32 score + its negated copy + int64 argpartition index, per (query, row) pair
BYTES_PER_SCORE = 16
_LAST = np.iinfo(np.int64).max


def _id_key(ids: np.ndarray) -> np.ndarray:
    """Sort key of ids: padding (-1) after every real id."""
    return np.where(ids < 0, _LAST, ids)


def sort_rows(scores: np.ndarray, ids: np.ndarray) -> SearchResult:
    """Order each row by descending score, then ascending id (padding last)."""
    order = np.lexsort((_id_key(ids), -scores), axis=-1)
    return SearchResult(
        np.take_along_axis(scores, order, axis=1).astype(np.float32, copy=False),
        np.take_along_axis(ids, order, axis=1).astype(np.int64, copy=False),
    )


def select_topk(scores: np.ndarray, ids: np.ndarray, k: int) -> SearchResult:
    """Top-``k`` of each row of ``scores`` ``[q, m]`` with matching ``ids``, ties by smaller id.

    Rows with fewer than ``k`` entries are padded with id -1 / score -inf.
    """
    q, m = scores.shape
    if m <= k:
        top = sort_rows(scores, np.asarray(ids))
        if m == k:
            return top
        pad = SearchResult.empty(q, k - m)
        return SearchResult(
            np.concatenate([top.scores, pad.scores], axis=1),
            np.concatenate([top.ids, pad.ids], axis=1),
        )
    part = np.argpartition(-scores, k - 1, axis=1)[:, :k]
    top_scores = np.take_along_axis(scores, part, axis=1)
    top_ids = np.take_along_axis(ids, part, axis=1)
    kth = top_scores.min(axis=1)
    # argpartition picks arbitrarily among values equal to the k-th; fix those rows
    tied = np.flatnonzero((scores >= kth[:, None]).sum(axis=1) > k)
    for r in tied:
        sel = np.flatnonzero(scores[r] >= kth[r])
        order = np.lexsort((_id_key(ids[r, sel]), -scores[r, sel]))[:k]
        top_scores[r] = scores[r, sel[order]]
        top_ids[r] = ids[r, sel[order]]
    return sort_rows(top_scores, top_ids)


def merge_results(a: SearchResult, b: SearchResult, k: int) -> SearchResult:
    """Top-``k`` of the union of two results over the same queries (ids must not collide)."""
    return select_topk(
        np.concatenate([a.scores, b.scores], axis=1),
        np.concatenate([a.ids, b.ids], axis=1),
        k,
    )


def exact_search(
    database: np.ndarray,
    queries: np.ndarray,
    k: int,
    block_bytes: int = DEFAULT_BLOCK_BYTES,
) -> SearchResult:
    """Exact top-``k`` rows of ``database`` ``[n, d]`` by inner product with ``queries``.

    ``database`` may be a memory-mapped array: it is read one block at a time.
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    dim = database.shape[1] if database.ndim == 2 else None
    q = as_matrix(queries, dim)
    n = len(database)
    out = SearchResult.empty(len(q), k)
    if n == 0 or len(q) == 0:
        return out
    q_block = min(len(q), QUERY_BLOCK)
    rows = max(k, block_bytes // (BYTES_PER_SCORE * q_block))
    if getattr(database, "dtype", np.float32) != np.float32:  # converted block by block
        rows = max(k, min(rows, block_bytes // (4 * q.shape[1])))
    for qs in range(0, len(q), q_block):
        qb = q[qs : qs + q_block]
        best = SearchResult.empty(len(qb), k)
        for ds in range(0, n, rows):
            block = np.asarray(database[ds : ds + rows], dtype=np.float32)
            scores = qb @ block.T  # [qb, rows]
            ids = np.broadcast_to(np.arange(ds, ds + len(block), dtype=np.int64), scores.shape)
            top = select_topk(scores, ids, k)
            best = top if ds == 0 else merge_results(best, top, k)
        out.scores[qs : qs + len(qb)] = best.scores
        out.ids[qs : qs + len(qb)] = best.ids
    return out


def rerank_exact(
    database: np.ndarray, queries: np.ndarray, candidates: SearchResult, k: int
) -> SearchResult:
    """Re-score ``candidates`` (ids into ``database``) exactly and keep the top ``k``.

    Turns approximate (e.g. PQ-compressed) scores into exact inner products; rows of a
    memory-mapped ``database`` are read only for the candidate ids.
    """
    q = as_matrix(queries, database.shape[1])
    out = SearchResult.empty(len(q), k)
    step = max(1, QUERY_BLOCK // 4)
    for start in range(0, len(q), step):
        ids = candidates.ids[start : start + step]
        rows = np.asarray(database[np.maximum(ids, 0).ravel()], dtype=np.float32)
        rows = rows.reshape(*ids.shape, -1)  # [qb, fetch, d]
        scores = np.einsum("qfd,qd->qf", rows, q[start : start + step])
        scores[ids < 0] = -np.inf
        top = select_topk(scores.astype(np.float32), ids, k)
        out.scores[start : start + len(ids)] = top.scores
        out.ids[start : start + len(ids)] = top.ids
    return out


class ExactIndex(VectorIndex):
    """Brute-force inner-product search over a (possibly memory-mapped) matrix.

    The matrix is float32, or float16 as an index stores it (:mod:`termnorm.index.vectors`):
    float16 rows are converted block by block at each search (memory stays bounded, the file
    may exceed RAM), or once with :meth:`resident` (fast queries; 4 bytes per component in
    RAM). Either way the scores are float32 products with the float16-rounded rows.
    """

    backend = Backend.EXACT
    FILE = "vectors.npy"

    def __init__(
        self,
        dimension: int,
        vectors: np.ndarray | None = None,
        block_bytes: int = DEFAULT_BLOCK_BYTES,
    ) -> None:
        super().__init__(dimension)
        self.block_bytes = block_bytes
        self._vectors = (
            _kept(vectors, dimension)
            if vectors is not None
            else np.empty((0, dimension), dtype=np.float32)
        )

    @classmethod
    def from_vectors(
        cls, vectors: np.ndarray, block_bytes: int = DEFAULT_BLOCK_BYTES
    ) -> ExactIndex:
        """Wrap ``vectors`` ``[n, d]`` (no copy when float32 or float16 and contiguous)."""
        return cls(int(vectors.shape[1]), vectors, block_bytes=block_bytes)

    @property
    def vectors(self) -> np.ndarray:
        """The stored matrix ``[n, d]`` (read-only view semantics; do not modify)."""
        return self._vectors

    @property
    def nbytes(self) -> int:
        """Bytes of the searched matrix (memory-mapped pages when loaded with ``mmap``)."""
        return int(self._vectors.nbytes)

    def resident(self) -> ExactIndex:
        """Hold the matrix in RAM as float32 (converted block by block; no-op when float32)."""
        if self._vectors.dtype != np.float32 or isinstance(self._vectors, np.memmap):
            out = np.empty(self._vectors.shape, dtype=np.float32)
            for start, block in iter_blocks(self._vectors):
                out[start : start + len(block)] = block
            self._vectors = out
        return self

    def __len__(self) -> int:
        return len(self._vectors)

    def add(self, vectors: np.ndarray) -> None:
        """Append rows (copies the stored matrix; keeps its dtype)."""
        new = as_matrix(vectors, self.dimension).astype(self._vectors.dtype, copy=False)
        self._vectors = np.concatenate([self._vectors, new])

    def search(self, queries: np.ndarray, k: int) -> SearchResult:
        """Exact top-``k``; see :func:`exact_search`."""
        return exact_search(self._vectors, queries, k, self.block_bytes)

    def save(self, folder: Path) -> None:
        """Write ``vectors.npy`` (in the stored dtype)."""
        folder.mkdir(parents=True, exist_ok=True)
        np.save(folder / self.FILE, np.asarray(self._vectors))

    @classmethod
    def load(cls, folder: Path, mmap: bool = True) -> ExactIndex:
        """Read ``vectors.npy`` (memory-mapped by default)."""
        vectors = np.load(folder / cls.FILE, mmap_mode="r" if mmap else None)
        return cls.from_vectors(vectors)


def _kept(vectors: np.ndarray, dimension: int) -> np.ndarray:
    """float16 matrices as they are (stored vectors); anything else as float32."""
    if isinstance(vectors, np.ndarray) and vectors.dtype == STORAGE_DTYPE and vectors.ndim == 2:
        if vectors.shape[1] != dimension:
            raise ValueError(f"expected vectors of dimension {dimension}, got {vectors.shape[1]}")
        return vectors if vectors.flags.c_contiguous else np.ascontiguousarray(vectors)
    return as_matrix(vectors, dimension)
