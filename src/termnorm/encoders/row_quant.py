"""Int8 weights and per-row int8 activations for the MatMuls of an ONNX graph.

:func:`quantize_rows` rewrites every ``MatMul(X, W)`` whose ``W`` is a constant 2-D float32
weight ``[K, N]`` (the transformer's projections and feed-forward layers; the attention
products of two activations stay float32). For activations ``X [..., K]``, row by row::

    lo, hi = min(X_row), max(X_row);   r = max(hi - lo, 1e-12)
    Xq  = round(L (X_row - lo) / r)                    uint8 in [0, L], the row's own range
    Wq  = round(W[:, n] / s_n),  s_n = max|W[:, n]| / 127      int8, per output column
    Y   = (r / L) * (Xq @ Wq) * s + lo * colsum(Wq * s)         (exact algebra, int32 GEMM)

The integer product runs in ONNX Runtime's ``MatMulIntegerToFloat``, in the layout that is
exact on this CPU (:mod:`termnorm.encoders.int8_kernel`): ``Wq`` as int8 (u8 x s8, VNNI) or
as uint8 with zero point 128 (u8 x u8, AVX2 without VNNI: the same product), ``L = 255``;
or 7-bit activations, ``L = 127``. Unlike ONNX Runtime's ``quantize_dynamic``, which takes one activation
range for the whole batch, every token row has its own range, so (a) one outlier token does
not coarsen the others (all-MiniLM-L6-v2 on 1,000 MEDIC terms: mean cosine with fp32 0.9988
instead of 0.9916), and (b) a text's vector does not depend on the other texts of its batch:
a query encoded alone gets the vector its text has in an index built with the same runtime.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from termnorm.encoders.int8_kernel import Int8Kernel, stored_weights

__all__ = ["quantize_rows"]

_MS_DOMAIN = "com.microsoft"


def _quantized_weight(w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(Wq int8 [K, N], scale float32 [N], colsum of the dequantized W float32 [N])``."""
    scale = np.abs(w).max(axis=0) / 127.0
    scale[scale == 0] = 1.0
    wq = np.clip(np.round(w / scale), -127, 127).astype(np.int8)
    colsum = (wq.astype(np.float32) * scale).sum(axis=0)
    return wq, scale.astype(np.float32), colsum.astype(np.float32)


def _node(kind: str, inputs: list[str], output: str, **attrs: Any) -> Any:
    from onnx import helper

    domain = _MS_DOMAIN if kind == "MatMulIntegerToFloat" else ""
    return helper.make_node(kind, inputs, [output], name=output, domain=domain, **attrs)


def _quantize_input(
    x: str, p: str, levels: int
) -> tuple[list[Any], list[Any], tuple[str, str, str]]:
    """Nodes and initializers quantizing activations ``x`` row by row onto ``[0, levels]``
    (names ``p*``), and the names of ``(Xq, lo, r)``. One per activation: the Q, K and V
    projections share it."""
    if not 1 <= levels <= 255:
        raise ValueError(f"activation levels must be in [1, 255], not {levels}")
    from onnx import numpy_helper

    constants: dict[str, np.ndarray] = {
        "as": np.array(1.0 / levels, np.float32),
        "azp": np.array(0, np.uint8),
        "eps": np.array(1e-12, np.float32),
    }
    inits = [numpy_helper.from_array(v, p + k) for k, v in constants.items()]
    nodes = [
        _node("ReduceMax", [x], p + "hi", axes=[-1], keepdims=1),
        _node("ReduceMin", [x], p + "lo", axes=[-1], keepdims=1),
        _node("Sub", [p + "hi", p + "lo"], p + "span"),
        _node("Max", [p + "span", p + "eps"], p + "r"),
        _node("Sub", [x, p + "lo"], p + "shifted"),
        _node("Div", [p + "shifted", p + "r"], p + "unit"),  # each row in [0, 1]
        _node("QuantizeLinear", [p + "unit", p + "as", p + "azp"], p + "xq"),
    ]
    return nodes, inits, (p + "xq", p + "lo", p + "r")


def _product(
    xq: str, lo: str, r: str, y: str, w: np.ndarray, p: str, q: str, kernel: Int8Kernel
) -> tuple[list[Any], list[Any]]:
    """Nodes and initializers computing ``y = x @ w`` from ``x``'s row quantization ``(xq,
    lo, r)`` made with prefix ``q`` (module doc), the weights stored as ``kernel`` stores
    them; new names start with ``p``."""
    from onnx import numpy_helper

    wq, scale, colsum = _quantized_weight(w)
    stored, zero = stored_weights(wq, kernel)
    inits = [
        numpy_helper.from_array(stored, p + "wq"),
        numpy_helper.from_array(zero, p + "wzp"),
        numpy_helper.from_array(scale, p + "ws"),
        numpy_helper.from_array(colsum, p + "colsum"),
    ]
    nodes = [
        _node(
            "MatMulIntegerToFloat",
            [xq, p + "wq", q + "as", p + "ws", q + "azp", p + "wzp"],
            p + "prod",
        ),
        _node("Mul", [p + "prod", r], p + "scaled"),
        _node("Mul", [lo, p + "colsum"], p + "offset"),
        _node("Add", [p + "scaled", p + "offset"], y),
    ]
    return nodes, inits


def quantize_rows(source: Path, out: Path, kernel: Int8Kernel) -> int:
    """Write ``source`` with its constant-weight MatMuls rewritten (module doc) for the int8
    layout ``kernel`` to ``out``; the number of MatMuls rewritten."""
    import onnx
    from onnx import helper, numpy_helper

    model = onnx.load(str(source))
    graph = model.graph
    weights = {i.name: i for i in graph.initializer}
    nodes: list[Any] = []
    added: list[Any] = []
    rewritten = 0
    quantized: dict[str, tuple[str, str, str, str]] = {}  # activation -> (xq, lo, r, prefix)
    for node in graph.node:
        weight = weights.get(node.input[1]) if node.op_type == "MatMul" else None
        if weight is None or len(weight.dims) != 2 or weight.data_type != onnx.TensorProto.FLOAT:
            nodes.append(node)
            continue
        rewritten += 1
        x = node.input[0]
        if x not in quantized:  # graphs are topologically sorted: later users come after
            q = f"rowq_in{len(quantized) + 1}_"
            new_nodes, inits, names = _quantize_input(x, q, kernel.levels)
            nodes.extend(new_nodes)
            added.extend(inits)
            quantized[x] = (*names, q)
        xq, lo, r, q = quantized[x]
        w = numpy_helper.to_array(weight).astype(np.float32)
        new_nodes, inits = _product(xq, lo, r, node.output[0], w, f"rowq{rewritten}_", q, kernel)
        nodes.extend(new_nodes)
        added.extend(inits)
    del graph.node[:]
    graph.node.extend(nodes)
    used = {name for node in graph.node for name in node.input}
    kept = [i for i in graph.initializer if i.name in used]
    del graph.initializer[:]
    graph.initializer.extend(kept + added)
    if not any(o.domain == _MS_DOMAIN for o in model.opset_import):
        model.opset_import.append(helper.make_opsetid(_MS_DOMAIN, 1))
    onnx.save(model, str(out))
    return rewritten
