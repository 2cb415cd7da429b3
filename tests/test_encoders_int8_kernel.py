"""The int8 guard: the layout chosen is exact on the CPU the test runs on; emulated AVX2 and
VNNI kernels get the layouts they can run; a runtime whose vectors drift is refused."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from termnorm.encoders import TermEncoder
from termnorm.encoders import transformer as transformer_mod
from termnorm.encoders.fidelity import (
    INT8_MIN_COSINE,
    PROBE_TERMS,
    RuntimeFidelityError,
    check_fidelity,
    required_cosine,
)
from termnorm.encoders.int8_kernel import (
    Int8Kernel,
    Int8KernelError,
    _both_ops,
    choose_kernel,
    int8_kernel,
    kernel_is_exact,
    stored_weights,
)
from termnorm.encoders.runtime import AUTO_MIN_COSINE, Runtime

pytest.importorskip("onnxruntime")

Product = Callable[[np.ndarray], np.ndarray]


def _emulated(saturating: set[Int8Kernel]) -> Callable[[np.ndarray, Int8Kernel], Product]:
    """A GEMM factory that computes like a CPU kernel: the layouts in ``saturating`` add two
    adjacent u8 x (stored) weight products into a saturating int16 lane (``vpmaddubsw``),
    the others accumulate exactly (VNNI's ``vpdpbusd``, or u8u8's 16-bit ``vpmaddwd``)."""

    def factory(wq: np.ndarray, kernel: Int8Kernel) -> Product:
        stored, zero = stored_weights(wq, kernel)
        b = stored.astype(np.int64)

        def gemm(a: np.ndarray) -> np.ndarray:
            x = a.astype(np.int64)
            if kernel not in saturating:
                return x @ (b - int(zero))
            pairs = x[:, 0::2, None] * b[None, 0::2] + x[:, 1::2, None] * b[None, 1::2]
            return np.clip(pairs, -32768, 32767).sum(axis=1) - int(zero) * x.sum(axis=1)[:, None]

        return gemm

    return factory


def test_a_vnni_kernel_keeps_8_bit_int8_weights() -> None:
    assert choose_kernel(_emulated(set())) is Int8Kernel.U8S8


def test_an_avx2_kernel_is_detected_and_gets_unsigned_weights() -> None:
    avx2 = _emulated({Int8Kernel.U8S8, Int8Kernel.U8S8_7BIT})
    assert not kernel_is_exact(avx2, Int8Kernel.U8S8)  # the saturation is seen
    assert kernel_is_exact(avx2, Int8Kernel.U8S8_7BIT)  # 127 * 127 * 2 fits a lane
    assert choose_kernel(avx2) is Int8Kernel.U8U8


def test_7_bit_activations_when_only_the_pairwise_kernel_exists() -> None:
    assert choose_kernel(_emulated(set(Int8Kernel))) is Int8Kernel.U8S8_7BIT


def test_no_exact_layout_refuses_int8() -> None:
    def broken(wq: np.ndarray, kernel: Int8Kernel) -> Product:
        return lambda a: a.astype(np.int64) @ wq.astype(np.int64) + 1

    with pytest.raises(Int8KernelError, match="--runtime torch or onnx"):
        choose_kernel(broken)


def test_the_chosen_layout_is_exact_on_this_cpu() -> None:
    # the real ONNX Runtime kernels of the machine running the test, both ops termnorm uses
    kernel = int8_kernel()
    assert kernel_is_exact(_both_ops, kernel)
    better = list(Int8Kernel)[: list(Int8Kernel).index(kernel)]
    assert not any(kernel_is_exact(_both_ops, k) for k in better)


def test_unsigned_weights_encode_the_same_numbers() -> None:
    wq = np.array([[-127, 0], [5, 127]], np.int8)
    stored, zero = stored_weights(wq, Int8Kernel.U8U8)
    assert stored.dtype == np.uint8 and int(zero) == 128
    np.testing.assert_array_equal(stored.astype(np.int64) - 128, wq)
    same, none = stored_weights(wq, Int8Kernel.U8S8)
    assert same.dtype == np.int8 and int(none) == 0


def test_required_cosines() -> None:
    assert required_cosine(Runtime.ONNX_INT8) == INT8_MIN_COSINE
    assert required_cosine(Runtime.ONNX) == AUTO_MIN_COSINE
    assert required_cosine(Runtime.TORCH) == 0.0


def _drifting(encoder: TermEncoder, noise: float) -> Callable[[dict[str, np.ndarray]], np.ndarray]:
    """A forward whose vectors are fp32's plus noise of the given size, renormalised."""
    from termnorm.encoders.forward import TorchForward

    exact = TorchForward(encoder)
    rng = np.random.default_rng(0)

    def forward(inputs: dict[str, np.ndarray]) -> np.ndarray:
        v = exact(inputs)
        v = v + noise * rng.normal(size=v.shape).astype(np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)  # type: ignore[no-any-return]

    return forward


def test_a_drifting_runtime_is_refused(tiny_bert_path: Path) -> None:
    encoder = TermEncoder.load(tiny_bert_path, device="cpu")
    assert check_fidelity(encoder, Runtime.ONNX_INT8, _drifting(encoder, 0.0)) > 0.9999
    with pytest.raises(RuntimeFidelityError, match=r"onnx-int8 gives vectors with cosine 0\.\d+"):
        check_fidelity(encoder, Runtime.ONNX_INT8, _drifting(encoder, 0.5))


def test_set_runtime_checks_before_binding(
    tiny_bert_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        transformer_mod, "build_forward", lambda enc, runtime, threads: _drifting(enc, 0.5)
    )
    encoder = TermEncoder.load(tiny_bert_path, device="cpu")
    with pytest.raises(RuntimeFidelityError, match="use --runtime torch or onnx"):
        encoder.set_runtime(Runtime.ONNX_INT8)
    assert encoder.runtime is Runtime.TORCH  # the refused runtime is not bound


def test_int8_vectors_pass_the_check_on_this_cpu(
    tiny_bert_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TERMNORM_CACHE", str(tmp_path / "cache"))
    encoder = TermEncoder.load(tiny_bert_path, device="cpu", runtime="onnx-int8")
    assert encoder.runtime_cosine >= INT8_MIN_COSINE
    reference = TermEncoder.load(tiny_bert_path, device="cpu").encode(list(PROBE_TERMS))
    vectors = encoder.encode(list(PROBE_TERMS))
    assert float((vectors * reference).sum(axis=1).min()) == pytest.approx(
        encoder.runtime_cosine, abs=1e-5
    )


def test_hand_built_graphs_load_when_onnx_is_newer_than_the_runtime(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A newer ``onnx`` than ``onnxruntime`` (onnx 1.23 stamps IR 14, onnxruntime 1.30 reads
    up to 13) must not break the int8 probe or the pre-scan: their graphs carry the IR their
    opset needs, not the newest one ``onnx`` knows."""
    import onnx
    from onnx import helper

    from termnorm.encoders.int8_kernel import _both_ops, _probe_weights
    from termnorm.encoders.runtime import onnx_model
    from termnorm.search.prescan import Int8Prescan

    monkeypatch.setattr(onnx, "IR_VERSION", 99)  # what make_model stamps by default
    graph = helper.make_graph([], "empty", [], [])
    assert onnx_model(graph, [helper.make_opsetid("", 17)]).ir_version == 8
    weights = _probe_weights()
    # ONNX Runtime refuses IR 99 here if stamped; all-one activations fit every layout exactly
    gemm = _both_ops(weights, Int8Kernel.U8S8)
    a = np.ones((1, weights.shape[0]), np.uint8)
    np.testing.assert_array_equal(gemm(a), a.astype(np.int64) @ weights.astype(np.int64))
    rows = np.random.default_rng(0).standard_normal((50, 16)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    found = Int8Prescan(rows).search(rows[3:4], 1)  # the layout this CPU's guard picks
    assert found.ids[0][0] == 3
