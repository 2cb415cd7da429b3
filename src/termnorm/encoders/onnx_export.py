"""Export an encoder to ONNX (fp32 and dynamic int8), cached by the model's fingerprint.

The exported graph is the whole encoder: ``normalize(head(pool(transformer(inputs))))``,
i.e. the transformer, the folder's pooling, its Dense head and the L2 normalisation, with
dynamic batch and sequence axes (``torch.onnx.export``, TorchScript exporter, opset
:data:`OPSET`). The int8 graph is the fp32 graph with int8 weights (per output channel) and
activations quantized on the fly per token row (:mod:`termnorm.encoders.row_quant`), so that a
text's vector does not depend on the batch it is encoded in.

ONNX Runtime applies its own graph optimizations (LayerNorm, GELU, bias and attention
fusions; ``ORT_ENABLE_ALL``) when a session is created. The offline transformer optimizer
(``onnxruntime.transformers.optimizer``) was measured and is not used: on all-MiniLM-L6-v2 on
a CPU its fused graphs ran 0.85-0.88x as fast as the plain export (the fused ``Attention``
kernel is slower on term-length sequences), see ``docs/results/runtimes.md``.

Cache: ``<model folder>/termnorm_onnx/<fingerprint>/`` holding ``model.onnx``,
``model-int8-<layout>.onnx`` (the int8 layout that is exact on this CPU: ``u8s8``, ``u8u8``
or ``u8s8-7bit``, :mod:`termnorm.encoders.int8_kernel`) and ``export.json`` (fingerprint, inputs, opset, versions). A graph is
reused while the model's fingerprint (weights, configs, tokenizer, pooling) is the one it
was exported from; when the model changes, the fingerprint changes and the graph is
exported again (older exports in the model folder are then removed). Folders termnorm may
not write into (read-only, or inside an installed package such as the default MiniLM) use
``<termnorm cache>/onnx/<fingerprint>/`` instead (:func:`termnorm.paths.cache_dir`).
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import sysconfig
import tempfile
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch
from torch import nn

from termnorm._artifacts import umask_mode
from termnorm.encoders.int8_kernel import Int8Kernel, int8_kernel
from termnorm.encoders.pooling import Pooling, pool
from termnorm.encoders.runtime import require_onnx
from termnorm.paths import cache_dir, writing

if TYPE_CHECKING:
    from termnorm.encoders.protocols import EncoderModel

__all__ = [
    "EXPORT_DIR",
    "INPUT_NAMES",
    "OPSET",
    "EncoderGraph",
    "export_folder",
    "onnx_graph",
]

logger = logging.getLogger(__name__)

EXPORT_DIR = "termnorm_onnx"
EXPORT_CARD = "export.json"
EXPORT_VERSION = 2  # 2: eager-attention export, per-row int8 (row_quant)
OPSET = 17
FP32_FILE = "model.onnx"
INT8_FILE = "model-int8-{kernel}.onnx"  # the int8 layout (encoders/int8_kernel.py)
#: the tokenizer outputs a graph may take, in this order
INPUT_NAMES = ("input_ids", "attention_mask", "token_type_ids")


class EncoderGraph(nn.Module):
    """What is exported: token ids → L2-normalised pooled (and Dense-projected) vectors."""

    def __init__(
        self, model: nn.Module, head: nn.Module, pooling: Pooling, inputs: tuple[str, ...]
    ) -> None:
        super().__init__()
        self.model = model
        self.head = head
        self.pooling = pooling
        self.inputs = inputs

    def forward(self, *tensors: torch.Tensor) -> torch.Tensor:
        """``tensors`` in the order of ``inputs``, each ``[B, T]`` → ``[B, d]`` float32."""
        batch = dict(zip(self.inputs, tensors, strict=True))
        hidden = self.model(**batch).last_hidden_state  # [B, T, H]
        vectors = self.head(pool(hidden, batch["attention_mask"], self.pooling)).float()
        return nn.functional.normalize(vectors, dim=-1)


def graph_inputs(encoder: EncoderModel) -> tuple[str, ...]:
    """The tokenizer outputs the model takes, among :data:`INPUT_NAMES`."""
    names = set(encoder.tokenizer.model_input_names)
    return tuple(n for n in INPUT_NAMES if n in names)


def _writable(root: Path) -> bool:
    """May termnorm keep files in this model folder? Not read-only, not an installed package."""
    if not os.access(root, os.W_OK):
        return False
    libs = (Path(sysconfig.get_paths()[key]).resolve() for key in ("purelib", "platlib"))
    return not any(root.resolve().is_relative_to(lib) for lib in libs)


def export_folder(encoder: EncoderModel) -> Path:
    """Where this encoder's graphs live (see module doc); not created here."""
    if encoder.path is None:
        raise ValueError("an encoder built in memory has no fingerprint; save it first")
    fingerprint = encoder.fingerprint
    if _writable(encoder.path):
        return encoder.path / EXPORT_DIR / fingerprint
    return cache_dir() / "onnx" / fingerprint


def _card(encoder: EncoderModel, inputs: tuple[str, ...]) -> dict[str, Any]:
    return {
        "version": EXPORT_VERSION,
        "fingerprint": encoder.fingerprint,
        "inputs": list(inputs),
        "opset": OPSET,
        "torch": torch.__version__,
    }


def _valid(folder: Path, card: dict[str, Any]) -> bool:
    path = folder / EXPORT_CARD
    if not (path.is_file() and (folder / FP32_FILE).is_file()):
        return False
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError:
        return False
    keys = ("version", "fingerprint", "inputs", "opset")
    return all(stored.get(k) == card[k] for k in keys)


def _export(encoder: EncoderModel, inputs: tuple[str, ...], out: Path) -> None:
    """Trace the encoder on a two-row dummy batch and write ``out`` (dynamic axes)."""
    graph = EncoderGraph(encoder.model, encoder.head, encoder.pooling, inputs)
    was_training = encoder.model.training
    encoder.model.eval()
    encoder.head.eval()
    dummy = encoder.tokenize(["a medical term", "another longer medical term to export"])
    try:
        trace_graph(graph, encoder.model, {n: dummy[n] for n in inputs}, "embedding", out)
    finally:
        encoder.model.train(was_training)


def trace_graph(
    graph: nn.Module,
    transformer: nn.Module,
    inputs: dict[str, torch.Tensor],
    output: str,
    out: Path,
    output_axes: tuple[int, ...] = (0,),
) -> None:
    """Write ``graph`` traced on ``inputs`` (``[B, T]`` each; both axes dynamic) to ``out``,
    its ``transformer`` switched to the eager attention meanwhile; ``output``'s axes in
    ``output_axes`` are dynamic too (batch, then sequence)."""
    axes = {name: {0: "batch", 1: "sequence"} for name in inputs}
    # the eager attention's plain MatMul/Softmax graph is what ONNX Runtime fuses best
    # (the int8 graph of all-MiniLM-L6-v2 ran 1.35x faster than from the SDPA export)
    attention = _attention_implementation(transformer)
    _set_attention(transformer, "eager")
    try:
        with warnings.catch_warnings():  # tracer notes on Python values taken as constants
            warnings.simplefilter("ignore")
            torch.onnx.export(
                graph,
                tuple(inputs.values()),
                str(out),
                input_names=list(inputs),
                output_names=[output],
                dynamic_axes={**axes, output: {a: ("batch", "sequence")[a] for a in output_axes}},
                opset_version=OPSET,
                dynamo=False,
            )
    finally:
        _set_attention(transformer, attention)


def _attention_implementation(model: nn.Module) -> str | None:
    config = getattr(model, "config", None)
    return getattr(config, "_attn_implementation", None)


def _set_attention(model: nn.Module, implementation: str | None) -> None:
    """Switch a transformers model's attention implementation (models without one: no-op)."""
    setter = getattr(model, "set_attn_implementation", None)
    if implementation is not None and setter is not None:
        setter(implementation)


def _quantize(fp32: Path, out: Path, kernel: Int8Kernel) -> None:
    from termnorm.encoders.row_quant import quantize_rows

    rewritten = quantize_rows(fp32, out, kernel)
    logger.info("int8 graph: %d MatMuls quantized, %s layout (%s)", rewritten, kernel.value, out)


def onnx_graph(
    encoder: EncoderModel, quantized: bool = False, kernel: Int8Kernel | None = None
) -> Path:
    """Path of the encoder's ONNX graph (int8 when ``quantized``), exported if not cached.

    ``kernel``: the int8 graph's layout; ``None`` takes the one that is exact on this CPU
    (:func:`termnorm.encoders.int8_kernel.int8_kernel`).

    Raises:
        Int8KernelError: int8 asked for and this CPU's int8 kernel is not exact.
        MissingExtraError: ``onnxruntime`` or ``onnx`` is not installed (extra ``onnx``).
        ValueError: the encoder has no folder (and so no fingerprint); save it first.
    """
    require_onnx()
    inputs = graph_inputs(encoder)
    folder = export_folder(encoder)
    card = _card(encoder, inputs)
    if not _valid(folder, card):
        with writing(folder):  # the cache read-only: say to set TERMNORM_CACHE
            folder.parent.mkdir(parents=True, exist_ok=True)
            tmp = Path(tempfile.mkdtemp(prefix=".export-", dir=folder.parent))
        tmp.chmod(umask_mode(directory=True))
        try:
            logger.info("exporting %s to ONNX (%s)", encoder.path, folder)
            _export(encoder, inputs, tmp / FP32_FILE)
            (tmp / EXPORT_CARD).write_text(json.dumps(card, indent=2) + "\n", encoding="utf-8")
            if folder.exists():
                shutil.rmtree(folder)
            tmp.rename(folder)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp)
        if folder.parent.name == EXPORT_DIR:  # our own folder in the model: drop stale exports
            for other in folder.parent.iterdir():
                if other.is_dir() and other.name != folder.name and not other.name.startswith("."):
                    shutil.rmtree(other)
    if not quantized:
        return folder / FP32_FILE
    kernel = int8_kernel() if kernel is None else Int8Kernel(kernel)
    name = INT8_FILE.format(kernel=kernel.value)
    int8 = folder / name
    if not int8.is_file():
        partial = folder / f".partial-{name}"
        _quantize(folder / FP32_FILE, partial, kernel)
        partial.replace(int8)
    return int8
