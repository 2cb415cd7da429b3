"""Inference runtimes: which engine runs an encoder's forward pass, and how ``auto`` picks one.

Runtimes (``--runtime``):

``torch``      the model in PyTorch, float32 (the reference every other runtime is held to);
``bf16``       the same model under ``torch.autocast(bfloat16)`` on the CPU (needs a CPU with
               bfloat16 support: AVX512-BF16 or AMX; refused elsewhere);
``onnx``       the model (transformer + pooling + Dense head + L2 norm) exported with
               ``torch.onnx`` and run by ONNX Runtime, float32;
``onnx-int8``  that graph with int8 weights (per output column) and activations (per token
               row), in the layout that is exact on this CPU (:mod:`termnorm.encoders.int8_kernel`);
``auto``       the fastest of the above whose vectors stay within :data:`AUTO_MIN_COSINE` of
               ``torch`` on a probe set, measured on this machine (:func:`choose_runtime`).

Every runtime but torch is checked against torch fp32 on this machine before it is used
(:mod:`termnorm.encoders.fidelity`). All runtimes return L2-normalised float32 vectors of the
same model, so an index built with one runtime may be queried with another (an index card records the runtime it was built
with; the model fingerprint, not the runtime, decides whether an encoder fits an index).

This module is import-free (the CLI offers the choices without loading torch).
"""

from __future__ import annotations

import importlib.util
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from termnorm.errors import MissingExtraError, RuntimeUnavailableError

logger = logging.getLogger(__name__)

__all__ = [
    "AUTO_MIN_COSINE",
    "CONCRETE_RUNTIMES",
    "RUNTIME_HELP",
    "THREADS_HELP",
    "Runtime",
    "RuntimeMeasure",
    "RuntimeUnavailableError",
    "choose_runtime",
    "default_build_runtime",
    "onnx_model",
    "require_onnx",
]

#: ``auto`` keeps a runtime only if every probe text's vector has cosine ≥ this with fp32.
#: 0.999 changes a cosine score by at most ~0.001 (scores of neighbours that close are
#: ties in practice); int8 weights usually miss it on small models, bf16 and ONNX fp32 pass.
AUTO_MIN_COSINE = 0.999


class Runtime(str, Enum):
    """The engine that runs an encoder's forward pass (see module doc)."""

    AUTO = "auto"
    TORCH = "torch"
    BF16 = "bf16"
    ONNX = "onnx"
    ONNX_INT8 = "onnx-int8"


#: ``--runtime`` / ``--threads`` help, shared by the commands that encode
RUNTIME_HELP = (
    "Inference runtime: torch (fp32), bf16, onnx, onnx-int8 (needs termnorm[onnx]), or auto "
    f"(the fastest whose vectors keep cosine >= {AUTO_MIN_COSINE} with fp32, measured here)."
)
THREADS_HELP = "CPU threads for the encoder (default: torch's / ONNX Runtime's choice)."

#: The runtimes ``auto`` measures, reference first.
CONCRETE_RUNTIMES = (Runtime.TORCH, Runtime.BF16, Runtime.ONNX, Runtime.ONNX_INT8)


def require_onnx() -> None:
    """Raise :class:`MissingExtraError` naming the ``onnx`` extra when a package is missing."""
    for package in ("onnxruntime", "onnx"):
        if importlib.util.find_spec(package) is None:
            raise MissingExtraError(package, "onnx")


def onnx_model(graph: Any, opsets: Sequence[Any]) -> Any:
    """An ONNX ``ModelProto`` of ``graph`` stamped with the lowest IR version its ``opsets``
    need (IR 8 for opset 17), not the newest the installed ``onnx`` writes.

    ``onnx`` and ``onnxruntime`` are released apart: ``onnx`` 1.23 stamps IR 14, which
    ``onnxruntime`` 1.30 refuses ("Unsupported model IR version: 14"). A graph built by hand
    uses only old operators, so the oldest IR that holds them loads in every runtime that
    runs those opsets. Domains ``onnx`` does not know (``com.microsoft``) are left out of
    the choice.
    """
    from onnx import helper

    version = helper.find_min_ir_version_for(list(opsets), ignore_unknown=True)
    return helper.make_model(graph, opset_imports=list(opsets), ir_version=version)


@dataclass(frozen=True)
class RuntimeMeasure:
    """One runtime measured on the probe set: speed and agreement with fp32 torch."""

    runtime: Runtime
    texts_per_second: float
    min_cosine: float  # smallest cosine between its vector and torch fp32's, over the probe


def choose_runtime(
    measures: Iterable[RuntimeMeasure], min_cosine: float = AUTO_MIN_COSINE
) -> Runtime:
    """The fastest measured runtime whose ``min_cosine`` ≥ ``min_cosine``.

    ``torch`` (the reference) always qualifies, so it is the answer when nothing faster
    does, or when nothing was measured. Ties in speed go to the earlier runtime of
    :data:`CONCRETE_RUNTIMES` (the simpler engine).
    """
    best, best_speed = Runtime.TORCH, -1.0
    for m in sorted(measures, key=lambda m: CONCRETE_RUNTIMES.index(Runtime(m.runtime))):
        ok = Runtime(m.runtime) is Runtime.TORCH or m.min_cosine >= min_cosine
        if ok and m.texts_per_second > best_speed:
            best, best_speed = Runtime(m.runtime), m.texts_per_second
    return best


def default_build_runtime() -> Runtime:
    """The runtime termnorm builds its own default index with (the first ``normalize``).

    ``onnx-int8`` when the ``onnx`` extra (onnx, onnxruntime) is installed: about twice as fast as
    fp32 here, vectors within cosine ~0.998 of fp32 in the int8 layout that is exact on this
    CPU (the index card records the runtime and its probe cosine; queries may use any
    runtime of the model). Binding the encoder to it still runs the fidelity check
    (:mod:`termnorm.encoders.fidelity`), and the default index falls back to torch with a
    warning where it fails. Without the extra ``torch``, with a warning that says how to get
    the faster build.
    """
    if all(importlib.util.find_spec(p) is not None for p in ("onnx", "onnxruntime")):
        return Runtime.ONNX_INT8
    logger.warning(
        "building the index with torch fp32: ONNX Runtime is missing from this install "
        "(pip install 'termnorm[onnx]' restores it; the int8 runtime builds about twice as fast)"
    )
    return Runtime.TORCH
