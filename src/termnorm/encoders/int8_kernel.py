"""Which int8 matrix product is exact on this CPU: the guard of every int8 path.

termnorm's int8 paths (the ``onnx-int8`` runtime, :mod:`termnorm.encoders.row_quant`, and the
search pre-scan, :mod:`termnorm.search.prescan`) multiply uint8 activations by int8 weights
with ONNX Runtime's ``MatMulInteger`` / ``MatMulIntegerToFloat`` and rely on the int32 result
being exact. It is on CPUs with VNNI (``vpdpbusd`` accumulates u8 x s8 products in 32 bits).
On x86 CPUs with AVX2 but no VNNI, ONNX Runtime's u8 x s8 kernel uses ``vpmaddubsw``, which
adds two adjacent products into a *saturating 16-bit* lane: ``255 * 127 * 2 = 64770`` does
not fit and the product is silently wrong (all-MiniLM-L6-v2: cosine to fp32 down to 0.90).

:class:`Int8Kernel` names the three ways to stay exact, best first:

``u8s8``       uint8 activations (255 levels) x int8 weights: the kernel accumulates in
               32 bits (VNNI);
``u8u8``       the same numbers, the weights stored as uint8 with zero point 128: ONNX
               Runtime's u8 x u8 kernel widens to 16 bits and multiplies with ``vpmaddwd``
               (32-bit sums), exact on AVX2 and giving the very vectors ``u8s8`` gives, at
               about 1.4x the GEMM time;
``u8s8-7bit``  7-bit activations (127 levels, ``127 * 127 * 2 = 32258`` fits a 16-bit
               lane), as ONNX Runtime's ``reduce_range`` and FBGEMM do: coarser vectors.

Rather than reading CPU flags (which differ by vendor, OS and ONNX Runtime build),
:func:`int8_kernel` runs each candidate on inputs where saturation shows (every activation
at the top of its range, every weight at ±127) and on random ones, in the GEMV and GEMM
shapes, and takes the first that is exact. When none is, int8 is refused
(:class:`Int8KernelError`). The answer is measured once per process.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from enum import Enum

import numpy as np

from termnorm.encoders.runtime import onnx_model, require_onnx
from termnorm.errors import Int8KernelError

__all__ = [
    "Int8Kernel",
    "Int8KernelError",
    "choose_kernel",
    "int8_kernel",
    "kernel_is_exact",
    "onnx_gemm",
    "stored_weights",
]

logger = logging.getLogger(__name__)

_PROBE_K = 256  # long enough for every kernel's inner loop to unroll over pairs
_PROBE_N = 32
_PROBE_ROWS = (1, 3, 16, 64)  # GEMV and GEMM paths of the kernel
_WEIGHT_ZERO = 128  # zero point of weights stored as uint8 (u8u8)


class Int8Kernel(str, Enum):
    """How activations and weights enter ONNX Runtime's integer GEMM (module doc)."""

    U8S8 = "u8s8"
    U8U8 = "u8u8"
    U8S8_7BIT = "u8s8-7bit"

    @property
    def levels(self) -> int:
        """Activation levels: uint8 activations lie in ``[0, levels]``."""
        return 127 if self is Int8Kernel.U8S8_7BIT else 255


#: ``factory(b int8 [K, N] in [-127, 127], kernel) -> (a uint8 [M, K] -> a @ b)``: the
#: weights are fixed when the product is built, as in a graph with constant weights
GemmFactory = Callable[[np.ndarray, "Int8Kernel"], Callable[[np.ndarray], np.ndarray]]


def stored_weights(wq: np.ndarray, kernel: Int8Kernel) -> tuple[np.ndarray, np.ndarray]:
    """``(B, B's zero point)`` to hand the GEMM for signed weights ``wq`` (int8 in
    ``[-127, 127]``): as they are with zero point 0, or shifted to uint8 with zero point 128
    for :attr:`Int8Kernel.U8U8` (the GEMM subtracts it back: the same product)."""
    if kernel is Int8Kernel.U8U8:
        shifted = (wq.astype(np.int16) + _WEIGHT_ZERO).astype(np.uint8)
        return shifted, np.array(_WEIGHT_ZERO, np.uint8)
    return wq.astype(np.int8, copy=False), np.array(0, np.int8)


def onnx_gemm(
    wq: np.ndarray, kernel: Int8Kernel, to_float: bool = False
) -> Callable[[np.ndarray], np.ndarray]:
    """``a -> a @ wq`` by ONNX Runtime on the CPU, ``wq`` a graph constant stored as
    ``kernel`` stores it (``MatMulInteger``, or ``MatMulIntegerToFloat`` with unit scales)."""
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper

    b, zero = stored_weights(wq, kernel)
    n = b.shape[1]
    inits = [numpy_helper.from_array(b, "b"), numpy_helper.from_array(zero, "b_zero")]
    a_zero = numpy_helper.from_array(np.array(0, np.uint8), "a_zero")
    if to_float:
        inits += [
            numpy_helper.from_array(np.array(1.0, np.float32), "a_scale"),
            numpy_helper.from_array(np.ones(n, np.float32), "b_scale"),
            a_zero,
        ]
        inputs = ["a", "b", "a_scale", "b_scale", "a_zero", "b_zero"]
        node = helper.make_node("MatMulIntegerToFloat", inputs, ["y"], domain="com.microsoft")
        out_type = TensorProto.FLOAT
    else:
        inits.append(a_zero)
        node = helper.make_node("MatMulInteger", ["a", "b", "a_zero", "b_zero"], ["y"])
        out_type = TensorProto.INT32
    graph = helper.make_graph(
        [node],
        "int8_probe",
        [helper.make_tensor_value_info("a", TensorProto.UINT8, [None, b.shape[0]])],
        [helper.make_tensor_value_info("y", out_type, [None, n])],
        inits,
    )
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]
    options = ort.SessionOptions()
    options.log_severity_level = 3
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(
        onnx_model(graph, opsets).SerializeToString(),
        options,
        providers=["CPUExecutionProvider"],
    )
    return lambda a: np.asarray(session.run(None, {"a": a})[0])


def _probe_weights() -> np.ndarray:
    """int8 ``[K, 4N]``: all +127, all -127, ±127 at random, random values."""
    rng = np.random.default_rng(0)
    plus = np.full((_PROBE_K, _PROBE_N), 127, np.int8)
    mixed = np.where(rng.random((_PROBE_K, _PROBE_N)) < 0.5, -127, 127).astype(np.int8)
    random = rng.integers(-127, 128, (_PROBE_K, _PROBE_N)).astype(np.int8)
    return np.concatenate([plus, -plus, mixed, random], axis=1)


def _probe_activations(levels: int, rows: int) -> list[np.ndarray]:
    """uint8 ``[rows, K]``: every activation at ``levels`` (the worst case of a pairwise
    16-bit accumulation), then random values in ``[0, levels]``."""
    rng = np.random.default_rng(rows)
    top = np.full((rows, _PROBE_K), levels, np.uint8)
    return [top, rng.integers(0, levels + 1, (rows, _PROBE_K)).astype(np.uint8)]


def kernel_is_exact(factory: GemmFactory, kernel: Int8Kernel) -> bool:
    """Whether the products ``factory`` builds multiply activations in ``[0, kernel.levels]``
    by int8 weights in ``[-127, 127]`` stored as ``kernel`` stores them exactly, on the probe
    inputs (worst cases and random values, GEMV and GEMM row counts)."""
    weights = _probe_weights()
    gemm = factory(weights, kernel)
    for rows in _PROBE_ROWS:
        for a in _probe_activations(kernel.levels, rows):
            want = a.astype(np.int64) @ weights.astype(np.int64)
            if not np.array_equal(np.asarray(gemm(a), dtype=np.int64), want):
                return False
    return True


def _both_ops(wq: np.ndarray, kernel: Int8Kernel) -> Callable[[np.ndarray], np.ndarray]:
    """The two ops termnorm runs (``MatMulInteger`` in the pre-scan, ``MatMulIntegerToFloat``
    in the int8 graph) as one product: ``MatMulInteger``'s result when the other agrees,
    else the float one (which then fails the exactness check)."""
    exact, as_float = onnx_gemm(wq, kernel), onnx_gemm(wq, kernel, to_float=True)

    def both(a: np.ndarray) -> np.ndarray:
        y, z = exact(a), as_float(a)
        return y if np.array_equal(y, z) else z

    return both


def choose_kernel(factory: GemmFactory) -> Int8Kernel:
    """The first of :class:`Int8Kernel` (in declaration order) that ``factory``'s products
    run exactly.

    Raises:
        Int8KernelError: none is exact.
    """
    for kernel in Int8Kernel:
        if kernel_is_exact(factory, kernel):
            return kernel
    raise Int8KernelError(
        "ONNX Runtime's int8 matrix product is not exact on this CPU in any layout termnorm "
        "knows (u8s8, u8u8, 7-bit activations); use --runtime torch or onnx (fp32)"
    )


@functools.lru_cache(maxsize=1)
def int8_kernel() -> Int8Kernel:
    """The layout the int8 paths use on this CPU (module doc), measured once per process.

    Raises:
        Int8KernelError: no layout is exact here.
        MissingExtraError: ``onnx``/``onnxruntime`` are not installed (extra ``onnx``).
    """
    require_onnx()
    kernel = choose_kernel(_both_ops)
    if kernel is not Int8Kernel.U8S8:
        logger.info(
            "this CPU's u8 x s8 GEMM saturates (no VNNI): int8 paths use the %s layout",
            kernel.value,
        )
    return kernel
