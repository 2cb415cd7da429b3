"""Exact top-k for a few query vectors, read from an int8 copy of the rows first.

One query against an exact index is a matrix-vector product that reads every stored vector
(MEDIC: 76k x 384 float32, 117 MB a query): the memory, not the arithmetic, sets its time.
:class:`Int8Prescan` keeps the rows as int8 (a quarter of the bytes; per-row scale
``s_i = max|x_i| / 127``) and answers :meth:`~Int8Prescan.search` in two steps:

1. approximate scores ``a_i`` of every row through ONNX Runtime's u8 x s8 integer GEMM (the
   query quantized over its own range ``[lo, lo + r]`` in ``L`` steps), with a bound on each
   error, ``|q . x_i - a_i| <= e_i = ||q||_1 s_i / 2 + r / (2L) * ||x^_i||_1 (+ 1e-5)``.
   The bound assumes an exact integer GEMM: the int8 rows are stored in the layout that is
   exact on this CPU (:func:`termnorm.encoders.int8_kernel.int8_kernel`: ``L = 255`` with
   int8 rows, or uint8 rows with zero point 128 on AVX2 without VNNI; ``L = 127`` with
   7-bit queries where neither is exact);
2. ``L`` = the k-th largest lower bound ``a_i - e_i``: every row of the true top k scores at
   least ``L``, so only rows with ``a_i + e_i >= L`` can be in it; those rows are scored
   exactly from the float32 vectors and the top k taken with the exact backend's tie rule
   (higher score, then the smaller row).

The result is the exact search's (scores up to float rounding in the last bit, as between
any two BLAS calls). When the candidates are more than :data:`MAX_CANDIDATE_SHARE` of the
rows (a query equally far from everything), the plain exact search is used instead. Only
calls with at most :data:`MAX_QUERIES` queries are pre-scanned: a batch of queries is a
matrix-matrix product that reuses each row it reads, and gains nothing.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np

from termnorm.encoders.int8_kernel import Int8Kernel, Int8KernelError, int8_kernel, stored_weights
from termnorm.encoders.runtime import onnx_model
from termnorm.index.base import SearchResult
from termnorm.index.exact import exact_search, select_topk

__all__ = [
    "MAX_BYTES",
    "MAX_CANDIDATE_SHARE",
    "MAX_QUERIES",
    "Int8Prescan",
    "prescan_available",
]

logger = logging.getLogger(__name__)

MAX_QUERIES = 8
#: largest int8 copy kept (n x d bytes; building it briefly takes about four times that)
MAX_BYTES = 512 << 20
MAX_CANDIDATE_SHARE = 0.05
_FLOAT_SLACK = 1e-5  # float32 rounding of the approximate scores, far above its real size


def prescan_available(rows: int, dimension: int) -> bool:
    """Whether a pre-scan of ``rows x dimension`` vectors is kept: its int8 copy fits
    :data:`MAX_BYTES`, the ``onnx`` extra (``onnx``, ``onnxruntime``) runs its GEMM, and an
    int8 layout is exact on this CPU (:func:`~termnorm.encoders.int8_kernel.int8_kernel`;
    where none is, searches stay exact float32 searches, and this is logged)."""
    import importlib.util

    if rows * dimension > MAX_BYTES:
        return False
    if not all(importlib.util.find_spec(p) is not None for p in ("onnx", "onnxruntime")):
        return False
    try:
        int8_kernel()
    except Int8KernelError as exc:
        logger.warning("no int8 pre-scan: %s", exc)
        return False
    return True


class Int8Prescan:
    """Exact top-k of ``vectors`` ``[n, d]`` (float32 or float16, may be memory-mapped) for
    a few queries at a time; see the module doc. Building it reads the rows once."""

    def __init__(
        self, vectors: np.ndarray, block_rows: int = 65536, kernel: Int8Kernel | None = None
    ) -> None:
        """``kernel``: the int8 layout; ``None``: the one that is exact on this CPU
        (:func:`~termnorm.encoders.int8_kernel.int8_kernel`)."""
        import onnxruntime as ort
        from onnx import TensorProto, helper, numpy_helper

        n, d = vectors.shape
        self.vectors = vectors
        self.kernel = int8_kernel() if kernel is None else Int8Kernel(kernel)
        self.levels = self.kernel.levels
        zero = stored_weights(np.zeros((1, 1), np.int8), self.kernel)[1]
        quantized = np.empty((d, n), dtype=zero.dtype)  # transposed: the GEMM's B, stored
        self.scale = np.empty(n, dtype=np.float32)
        self.l1 = np.empty(n, dtype=np.float32)  # ||x^_i||_1 of the dequantized rows
        self.rowsum = np.empty(n, dtype=np.float32)  # sum_k of the int8 row
        for start in range(0, n, block_rows):
            block = np.asarray(vectors[start : start + block_rows], dtype=np.float32)
            rows = slice(start, start + len(block))
            scale = np.abs(block).max(axis=1) / 127.0
            scale[scale == 0] = 1.0
            q = np.clip(np.round(block / scale[:, None]), -127, 127).astype(np.int8)
            quantized[:, rows] = stored_weights(q.T, self.kernel)[0]
            self.scale[rows] = scale
            self.l1[rows] = np.abs(q).sum(axis=1, dtype=np.int64) * scale
            self.rowsum[rows] = q.sum(axis=1, dtype=np.int64)
        self._scaled_rowsum = self.scale * self.rowsum  # per-query work, done once
        self._half_scale = self.scale / 2
        self._half_l1 = self.l1 / 2
        graph = helper.make_graph(
            [helper.make_node("MatMulInteger", ["q", "rows", "q_zero", "rows_zero"], ["dot"])],
            "prescan",
            [helper.make_tensor_value_info("q", TensorProto.UINT8, [None, d])],
            [helper.make_tensor_value_info("dot", TensorProto.INT32, [None, n])],
            [
                numpy_helper.from_array(quantized, "rows"),
                numpy_helper.from_array(np.array(0, np.uint8), "q_zero"),
                numpy_helper.from_array(zero, "rows_zero"),
            ],
        )
        model = onnx_model(graph, [helper.make_opsetid("", 17)])
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1  # single queries: one core is what latency needs
        options.log_severity_level = 3
        self._session: Any = ort.InferenceSession(
            model.SerializeToString(), options, providers=["CPUExecutionProvider"]
        )

    def __len__(self) -> int:
        return len(self.scale)

    def search(self, queries: np.ndarray, k: int) -> SearchResult:
        """Exact top-``k`` rows per query (more than :data:`MAX_QUERIES`: plain exact)."""
        n = len(self)
        if len(queries) > MAX_QUERIES or k >= n:
            return exact_search(self.vectors, queries, k)
        q = np.asarray(queries, dtype=np.float32)
        lo = q.min(axis=1, keepdims=True)
        span = np.maximum(q.max(axis=1, keepdims=True) - lo, 1e-12)
        step = span / self.levels
        codes = np.clip(np.round((q - lo) / step), 0, self.levels).astype(np.uint8)
        (dot,) = self._session.run(None, {"q": codes})
        scores = np.empty((len(q), k), dtype=np.float32)
        ids = np.empty((len(q), k), dtype=np.int64)
        l1_q = np.abs(q).sum(axis=1)
        for j in range(len(q)):
            # q^ . x^_i = s_i (lo * sum_k xq_ik + step * codes . xq_i)
            approx = dot[j].astype(np.float32)
            approx *= self.scale
            approx *= step[j, 0]
            approx += lo[j, 0] * self._scaled_rowsum
            error = self._half_l1 * step[j, 0]
            error += l1_q[j] * self._half_scale + _FLOAT_SLACK
            floor = np.partition(approx - error, n - k)[n - k]  # the k-th largest lower bound
            approx += error
            rows = np.flatnonzero(approx >= floor)
            if len(rows) > MAX_CANDIDATE_SHARE * n:
                top = exact_search(self.vectors, q[j : j + 1], k)
            else:
                exact = np.asarray(self.vectors[rows], dtype=np.float32) @ q[j]
                top = select_topk(exact[None, :], rows[None, :], k)
            scores[j], ids[j] = top.scores[0], top.ids[0]
        return SearchResult(scores, ids)
