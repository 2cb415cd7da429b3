"""The span tagger's int8 runtime: its network exported to ONNX, its MatMuls quantized per row.

:func:`tagger_graph` exports a :class:`~termnorm.encoders.token_tagger.TrainedTagger`'s network
(``input_ids, attention_mask -> logits [B, T, labels]``, dynamic batch and sequence axes, eager
attention, opset :data:`~termnorm.encoders.onnx_export.OPSET`) and rewrites its constant-weight
MatMuls as the encoders' ``onnx-int8`` runtime does (:func:`~termnorm.encoders.row_quant.quantize_rows`:
int8 weights per output column, activations per token row, so a chunk's tags do not depend on
its batch), in the layout that is exact on this CPU (:func:`~termnorm.encoders.int8_kernel.int8_kernel`,
the guard of every int8 path: where none is, :class:`~termnorm.errors.Int8KernelError`). The
graphs are kept in the tagger folder's ``termnorm_onnx/<key>/`` (under the termnorm cache when the
folder is read-only), ``key`` a digest of the weight files' sizes and modification times.

:func:`check_tagger_fidelity` is the check before use: the int8 graph must give the fp32
network's tag on at least :data:`MIN_TAG_AGREEMENT` of the word pieces of
:data:`~termnorm.encoders.fidelity.PROBE_TERMS` written as sentences.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import torch

from termnorm.encoders.onnx_export import EXPORT_DIR, _writable, trace_graph
from termnorm.errors import RuntimeFidelityError
from termnorm.paths import cache_dir, writing

if TYPE_CHECKING:
    from termnorm.encoders.forward import OnnxForward
    from termnorm.encoders.token_tagger import TrainedTagger

__all__ = ["MIN_TAG_AGREEMENT", "check_tagger_fidelity", "tagger_graph"]

MIN_TAG_AGREEMENT = 0.98
"""The smallest share of probe word pieces whose int8 tag must be the fp32 network's."""


def _key(folder: Path) -> str:
    """A digest of the tagger's weight and card files (size, modification time)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and EXPORT_DIR not in p.parts):
        stat = path.stat()
        digest.update(f"{path.relative_to(folder)}\t{stat.st_size}\t{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:16]


def tagger_graph(tagger: TrainedTagger) -> Path:
    """The int8 ONNX graph of ``tagger``'s network (module doc), exported if not cached.

    Raises:
        Int8KernelError: no int8 layout is exact on this CPU.
        MissingExtraError: ``onnxruntime`` or ``onnx`` is not installed (extra ``onnx``).
    """
    from termnorm.encoders.int8_kernel import int8_kernel
    from termnorm.encoders.row_quant import quantize_rows
    from termnorm.encoders.runtime import require_onnx

    require_onnx()
    kernel = int8_kernel()
    root = tagger.path if _writable(tagger.path) else cache_dir() / "onnx-tagger"
    folder = root / EXPORT_DIR / _key(tagger.path)
    int8 = folder / f"tagger-int8-{kernel.value}.onnx"
    if int8.is_file():
        return int8
    with writing(folder):
        folder.mkdir(parents=True, exist_ok=True)
    fp32 = folder / ".tagger.onnx"
    _export(tagger, fp32)
    partial = folder / f".partial-{int8.name}"
    quantize_rows(fp32, partial, kernel)
    partial.replace(int8)
    fp32.unlink()
    return int8


def _export(tagger: TrainedTagger, out: Path) -> None:
    """Trace the network on a two-row dummy batch and write ``out`` (dynamic axes)."""
    dummy = tagger.tokenizer(
        ["a finding", "another longer finding to export"],
        padding=True,
        return_tensors="pt",
        return_token_type_ids=False,
    )
    inputs = {name: dummy[name] for name in ("input_ids", "attention_mask")}
    trace_graph(tagger.model, tagger.model.encoder, inputs, "logits", out, (0, 1))


def check_tagger_fidelity(tagger: TrainedTagger, forward: OnnxForward) -> float:
    """The share of probe word pieces where ``forward`` (the int8 graph) gives the fp32
    network's tag, after checking it reaches :data:`MIN_TAG_AGREEMENT`.

    Raises:
        RuntimeFidelityError: it does not; the message says what to use instead.
    """
    from termnorm.encoders.fidelity import PROBE_TERMS

    texts = [f"The patient had {term} and was treated." for term in PROBE_TERMS]
    batch = tagger.tokenizer(
        texts,
        padding=True,
        truncation=True,
        max_length=tagger.max_length,
        return_tensors="np",
        return_token_type_ids=False,
    )
    ids = batch["input_ids"].astype(np.int64)
    mask = batch["attention_mask"].astype(np.int64)
    with torch.inference_mode():
        reference = tagger.model(torch.from_numpy(ids), torch.from_numpy(mask)).argmax(-1).numpy()
    tags = forward({"input_ids": ids, "attention_mask": mask}).argmax(-1)
    real = mask.astype(bool)
    agreement = float((tags[real] == reference[real]).mean())
    if agreement < MIN_TAG_AGREEMENT:
        raise RuntimeFidelityError(
            f"onnx-int8: the int8 span tagger gives the fp32 tag on {agreement:.1%} "
            f"of the probe word pieces on this machine (at least {MIN_TAG_AGREEMENT:.0%} is "
            "required): use --ner-runtime torch (or bf16)"
        )
    return agreement
