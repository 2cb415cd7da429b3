"""faiss backends (inner product): Flat (exact), HNSW, IVF-PQ and IVF-HNSW (approximate).

faiss is an optional extra; using any of these without it raises
``MissingExtraError("faiss-cpu", "faiss")``. IVF-PQ is trained by :meth:`FaissIndex.train`
(or, without it, on the first vectors added), with its list count and code size clamped to
what that many vectors can train (faiss wants about 39 training points per centroid).
IVF-HNSW is IVF-PQ whose coarse quantizer is an HNSW graph over the list centroids (for
many lists, where scanning every centroid per query would cost more than the lists). Results are re-sorted so ties break by the smaller id
and missing results are padded with id -1 / score -inf, as for :class:`ExactIndex`.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from termnorm.errors import MissingExtraError
from termnorm.index.base import PAD_ID, PAD_SCORE, Backend, SearchResult, VectorIndex, as_matrix
from termnorm.index.exact import sort_rows

__all__ = ["DEFAULT_PARAMS", "FaissIndex", "import_faiss", "pq_subquantizers"]

DEFAULT_PARAMS: dict[Backend, dict[str, int]] = {
    Backend.FAISS_FLAT: {},
    Backend.FAISS_HNSW: {"m": 32, "ef_construction": 80, "ef_search": 128},
    Backend.FAISS_IVFPQ: {"nlist": 1024, "m": 16, "nbits": 8, "nprobe": 32},
    Backend.FAISS_IVF_HNSW: {
        "nlist": 16384,
        "m": 16,
        "nbits": 8,
        "nprobe": 32,
        "hnsw_m": 32,
        "ef_search": 128,
    },
}
POINTS_PER_CENTROID = 39  # faiss' minimum training points per k-means centroid


def import_faiss() -> ModuleType:
    """The ``faiss`` module, or a :class:`MissingExtraError` naming the extra to install."""
    try:
        import faiss
    except ImportError as exc:
        raise MissingExtraError("faiss-cpu", "faiss") from exc
    return faiss


def pq_subquantizers(dimension: int, m: int) -> int:
    """Largest divisor of ``dimension`` that is ``<= m`` (PQ needs ``dimension % m == 0``)."""
    return max(d for d in range(1, min(m, dimension) + 1) if dimension % d == 0)


def _hnsw_bytes(faiss: ModuleType, index: Any, dimension: int) -> int:
    """Vectors plus graph links (neighbours, levels, offsets) of an HNSW index."""
    hnsw = index.hnsw
    links = hnsw.neighbors.size() * 4 + hnsw.levels.size() * 4 + hnsw.offsets.size() * 8
    return int(index.ntotal) * dimension * 4 + int(links)


def _trainable(n: int, nlist: int, nbits: int) -> tuple[int, int]:
    """``(nlist, nbits)`` clamped so that ``n`` vectors can train them."""
    nlist = max(1, min(nlist, n // POINTS_PER_CENTROID))
    nbits = max(1, min(nbits, int(math.log2(max(2, n // POINTS_PER_CENTROID)))))
    return nlist, nbits


class FaissIndex(VectorIndex):
    """A faiss inner-product index of one of the three faiss :class:`Backend` kinds."""

    FILE = "index.faiss"
    PARAMS_FILE = "faiss.json"

    def __init__(self, dimension: int, backend: Backend, **params: int) -> None:
        if not backend.is_faiss:
            raise ValueError(f"{backend.value} is not a faiss backend")
        super().__init__(dimension)
        self.backend = backend
        self.params = {**DEFAULT_PARAMS[backend], **params}
        self._faiss = import_faiss()
        self._index: Any = None if backend.is_ivf else self._make(0)

    def _make(self, n_train: int) -> Any:
        """Create the (untrained) faiss index; IVF-PQ sizes itself for ``n_train`` vectors."""
        faiss, d, p = self._faiss, self.dimension, self.params
        if self.backend is Backend.FAISS_FLAT:
            return faiss.IndexFlatIP(d)
        if self.backend is Backend.FAISS_HNSW:
            index = faiss.IndexHNSWFlat(d, p["m"], faiss.METRIC_INNER_PRODUCT)
            index.hnsw.efConstruction = p["ef_construction"]
            index.hnsw.efSearch = p["ef_search"]
            return index
        nlist, nbits = _trainable(n_train, p["nlist"], p["nbits"])
        m = pq_subquantizers(d, p["m"])
        self.params.update(nlist=nlist, nbits=nbits, m=m)
        if self.backend is Backend.FAISS_IVF_HNSW:
            quantizer = faiss.IndexHNSWFlat(d, p["hnsw_m"], faiss.METRIC_INNER_PRODUCT)
            quantizer.hnsw.efSearch = p["ef_search"]
        else:
            quantizer = faiss.IndexFlatIP(d)
        index = faiss.IndexIVFPQ(quantizer, d, nlist, m, nbits, faiss.METRIC_INNER_PRODUCT)
        if self.backend is Backend.FAISS_IVF_HNSW:
            # k-means assigns with a flat index; the centroids then go into the graph
            self._clustering = faiss.IndexFlatIP(d)
            index.clustering_index = self._clustering
        index.nprobe = min(p["nprobe"], nlist)
        # sizes are already clamped to the training set; silence faiss' stderr warnings
        index.cp.min_points_per_centroid = 1
        index.pq.cp.min_points_per_centroid = 1
        return index

    def train(self, sample: np.ndarray) -> None:
        """Train IVF kinds on ``sample`` rows (sizes clamp to it); other kinds need none.

        Call it before :meth:`add` to add vectors in blocks; an IVF index that was never
        trained trains on its first :meth:`add`.
        """
        if not self.backend.is_ivf:
            return
        if self._index is not None:
            raise ValueError("this IVF index is already trained")
        x = as_matrix(sample, self.dimension)
        self._index = self._make(len(x))
        self._index.train(x)

    @property
    def nbytes(self) -> int:
        """Bytes the built structure holds in RAM: stored vectors or codes with their ids,
        graph links, centroids and codebooks (what :func:`estimate_bytes` predicts)."""
        index = self._index
        if index is None:
            return 0
        faiss, d = self._faiss, self.dimension
        if self.backend is Backend.FAISS_FLAT:
            return int(index.ntotal) * d * 4
        if self.backend is Backend.FAISS_HNSW:
            return _hnsw_bytes(faiss, index, d)
        ivf = faiss.downcast_index(faiss.extract_index_ivf(index))
        lists = ivf.invlists
        stored = sum(lists.list_size(i) for i in range(ivf.nlist)) * (ivf.code_size + 8)
        pq = ivf.pq.M * ivf.pq.ksub * ivf.pq.dsub * 4
        quantizer = faiss.downcast_index(ivf.quantizer)
        coarse = (
            _hnsw_bytes(faiss, quantizer, d)
            if isinstance(quantizer, faiss.IndexHNSW)
            else int(quantizer.ntotal) * d * 4
        )
        return int(stored + pq + coarse)

    def __len__(self) -> int:
        return 0 if self._index is None else int(self._index.ntotal)

    def add(self, vectors: np.ndarray) -> None:
        """Append rows (float16 rows are converted); an untrained IVF index is trained on
        the first batch added."""
        x = as_matrix(vectors, self.dimension)
        if len(x) == 0:
            return
        if self._index is None:
            self._index = self._make(len(x))
            self._index.train(x)
        self._index.add(x)

    def search(self, queries: np.ndarray, k: int) -> SearchResult:
        """Approximate (HNSW, IVF-PQ) or exact (Flat) top-``k``."""
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        q = as_matrix(queries, self.dimension)
        if len(self) == 0 or len(q) == 0:
            return SearchResult.empty(len(q), k)
        scores, ids = self._index.search(q, k)
        missing = ids < 0
        scores[missing] = PAD_SCORE
        ids[missing] = PAD_ID
        return sort_rows(scores, ids.astype(np.int64))

    def save(self, folder: Path) -> None:
        """Write ``index.faiss`` and ``faiss.json`` (backend and parameters)."""
        folder.mkdir(parents=True, exist_ok=True)
        meta = {"backend": self.backend.value, "dimension": self.dimension, "params": self.params}
        (folder / self.PARAMS_FILE).write_text(json.dumps(meta, indent=2) + "\n")
        if self._index is not None:
            self._faiss.write_index(self._index, str(folder / self.FILE))

    @classmethod
    def load(cls, folder: Path) -> FaissIndex:
        """Read an index written by :meth:`save`."""
        meta = json.loads((folder / cls.PARAMS_FILE).read_text())
        index = cls(int(meta["dimension"]), Backend(meta["backend"]), **meta["params"])
        if (folder / cls.FILE).is_file():
            index._index = index._faiss.read_index(str(folder / cls.FILE))
        return index
