"""The forward pass of each runtime: padded token arrays → L2-normalised float32 vectors.

A forward is a callable ``inputs -> [B, d]`` where ``inputs`` maps ``input_ids``,
``attention_mask`` (and ``token_type_ids`` when the model takes them) to int64 ``[B, T]``
arrays. Everything that does not depend on the batch (the ONNX session, the model on its
device, thread settings) is set up once, when the forward is built (:func:`build_forward`);
a call does the forward pass only. Which runtime is which: :mod:`termnorm.encoders.runtime`.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import torch

from termnorm.encoders.onnx_export import onnx_graph
from termnorm.encoders.pooling import pool
from termnorm.encoders.protocols import Forward
from termnorm.encoders.runtime import Runtime, RuntimeUnavailableError, require_onnx

if TYPE_CHECKING:
    from termnorm.encoders.protocols import EncoderModel

__all__ = [
    "Forward",
    "OnnxForward",
    "TorchForward",
    "bf16_supported",
    "build_forward",
    "check_threads",
    "set_threads",
    "torch_threads",
]


def bf16_supported(device: torch.device) -> bool:
    """Does ``device`` run bfloat16 natively (CPU: AVX512-BF16 or AMX; CUDA: Ampere+)?"""
    if device.type == "cuda":
        return bool(torch.cuda.is_bf16_supported())
    return bool(
        torch.backends.mkldnn.is_available() and torch.ops.mkldnn._is_mkldnn_bf16_supported()
    )


def check_threads(threads: int | None) -> int | None:
    """``threads``, refused when it is not ``None`` and below 1."""
    if threads is not None and threads < 1:
        raise ValueError(f"--threads must be at least 1, not {threads}")
    return threads


def set_threads(threads: int | None) -> None:
    """Intra-op threads of torch for this process (``None``: leave torch's choice)."""
    checked = check_threads(threads)
    if checked is not None:
        torch.set_num_threads(checked)


_scope = threading.RLock()  # one torch_threads block at a time (torch's setting is global)


@contextlib.contextmanager
def torch_threads(threads: int | None) -> Iterator[None]:
    """Torch's intra-op threads are ``threads`` inside the block and what they were before it
    after it (``None``: unchanged), so one component's setting does not leak into the process.
    Blocks nest; blocks of other threads wait, since the setting is the process's."""
    if threads is None:
        yield
        return
    with _scope:
        before = torch.get_num_threads()
        set_threads(threads)
        try:
            yield
        finally:
            torch.set_num_threads(before)


class TorchForward:
    """The encoder's torch modules as they are now (fp32, or bf16 autocast)."""

    def __init__(self, encoder: EncoderModel, bf16: bool = False) -> None:
        self.encoder = encoder
        self.bf16 = bf16

    def __call__(self, inputs: dict[str, np.ndarray]) -> np.ndarray:
        """One forward pass without gradients (see :class:`Forward`)."""
        enc = self.encoder
        batch = {k: torch.from_numpy(v).to(enc.device) for k, v in inputs.items()}
        autocast = (
            torch.autocast(enc.device.type, dtype=torch.bfloat16)
            if self.bf16
            else contextlib.nullcontext()
        )
        with torch.inference_mode(), autocast:
            hidden = enc.model(**batch).last_hidden_state  # [B, T, H]
            vectors = enc.head(pool(hidden, enc.pooling_mask(batch), enc.pooling))
        vectors = torch.nn.functional.normalize(vectors.float(), dim=-1)
        return vectors.cpu().numpy()  # type: ignore[no-any-return]


class OnnxForward:
    """An ONNX Runtime session on an exported graph (CPU), created once."""

    def __init__(self, graph: Path, threads: int | None = None) -> None:
        require_onnx()
        import onnxruntime as ort

        options = ort.SessionOptions()
        # every fusion ORT has (LayerNorm, GELU, bias, attention, int8 MatMul + scale);
        # nodes run one after the other (a term encoder's graph is one chain: inter-op
        # parallelism only adds thread hand-offs), each on ``threads`` intra-op threads
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.inter_op_num_threads = 1
        if threads is not None:
            options.intra_op_num_threads = threads
        # idle pool threads sleep instead of spinning: spinning doubled the CPU time of an
        # index build on a busy 2-core machine and halved its speed (1,520 vs 830 texts per
        # CPU-second, 500 vs 305 texts/s)
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 3  # errors only
        self.graph = graph
        self.session = ort.InferenceSession(str(graph), options, providers=["CPUExecutionProvider"])
        self.names = [i.name for i in self.session.get_inputs()]

    def __call__(self, inputs: dict[str, np.ndarray]) -> np.ndarray:
        """One session run (see :class:`Forward`)."""
        (vectors,) = self.session.run(None, {n: inputs[n] for n in self.names})
        return np.asarray(vectors, dtype=np.float32)


def build_forward(encoder: EncoderModel, runtime: Runtime, threads: int | None = None) -> Forward:
    """The forward of a concrete ``runtime`` (not ``auto``) for ``encoder``.

    Raises:
        RuntimeUnavailableError: ``bf16`` on a device without bfloat16 support.
        MissingExtraError: an ONNX runtime without ``onnxruntime``/``onnx`` installed.
    """
    runtime = Runtime(runtime)
    if runtime is Runtime.TORCH:
        return TorchForward(encoder)
    if runtime is Runtime.BF16:
        if not bf16_supported(encoder.device):
            raise RuntimeUnavailableError(
                f"--runtime bf16: this {encoder.device.type.upper()} has no native bfloat16 "
                "support (AVX512-BF16/AMX on CPUs); use --runtime torch, onnx or auto"
            )
        return TorchForward(encoder, bf16=True)
    if runtime in (Runtime.ONNX, Runtime.ONNX_INT8):
        if encoder.markers is not None:
            raise RuntimeUnavailableError(
                f"--runtime {runtime.value}: this model has mention markers [M_s]/[M_e], whose "
                "pooling over the mention the exported graph does not do; use --runtime torch"
            )
        graph = onnx_graph(encoder, quantized=runtime is Runtime.ONNX_INT8)
        return OnnxForward(graph, threads)
    raise ValueError(f"{runtime.value!r} is not a concrete runtime; resolve 'auto' first")
