"""``--runtime auto``: measure each runtime on this machine and keep the fastest faithful one.

The probe is :data:`~termnorm.encoders.fidelity.PROBE_TERMS` (medical terms of 1 to 12
words). Each concrete runtime
that can run here encodes it (once to warm up, then timed, best of :data:`REPEATS`), and its
vectors are compared with torch fp32's; :func:`termnorm.encoders.runtime.choose_runtime`
takes the fastest whose smallest cosine is ≥ ``AUTO_MIN_COSINE``. Runtimes that cannot run
here are left out of the measurement and logged: ``bf16`` without CPU bfloat16 support, the
ONNX runtimes without the ``onnx`` extra (an explicit ``--runtime onnx`` raises instead).
The choice is remembered per process for (fingerprint, threads).
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

import numpy as np

from termnorm.encoders.fidelity import PROBE_TERMS, min_cosine
from termnorm.encoders.forward import build_forward
from termnorm.encoders.runtime import (
    CONCRETE_RUNTIMES,
    Runtime,
    RuntimeMeasure,
    RuntimeUnavailableError,
    choose_runtime,
)
from termnorm.errors import MissingExtraError

if TYPE_CHECKING:
    from termnorm.encoders.protocols import EncoderModel

__all__ = ["PROBE_TERMS", "measure_runtimes", "resolve_auto"]

logger = logging.getLogger(__name__)

REPEATS = 2

_chosen: dict[tuple[str, int | None], Runtime] = {}


def measure_runtimes(
    encoder: EncoderModel, threads: int | None = None, texts: tuple[str, ...] = PROBE_TERMS
) -> list[RuntimeMeasure]:
    """Speed and fp32 agreement of every runtime that can run here (see module doc)."""
    measures: list[RuntimeMeasure] = []
    reference: np.ndarray | None = None
    for runtime in CONCRETE_RUNTIMES:
        try:
            forward = build_forward(encoder, runtime, threads)
        except (RuntimeUnavailableError, MissingExtraError) as exc:
            logger.info("auto: %s left out (%s)", runtime.value, exc)
            continue
        vectors = encoder.encode_with(forward, texts)  # warm-up
        best = float("inf")
        for _ in range(REPEATS):
            start = time.perf_counter()
            encoder.encode_with(forward, texts)
            best = min(best, time.perf_counter() - start)
        if reference is None:
            reference = vectors  # torch fp32 comes first
        cosine = min_cosine(vectors, reference)
        measures.append(RuntimeMeasure(runtime, len(texts) / max(best, 1e-9), cosine))
        logger.info(
            "auto: %s %.0f texts/s, min cosine %.5f", runtime.value, len(texts) / best, cosine
        )
    return measures


def resolve_auto(encoder: EncoderModel, threads: int | None = None) -> Runtime:
    """The runtime ``auto`` stands for with this encoder and thread count (measured once)."""
    key = (encoder.fingerprint, threads)
    if key not in _chosen:
        _chosen[key] = choose_runtime(measure_runtimes(encoder, threads))
        logger.info("--runtime auto chose %s", _chosen[key].value)
    return _chosen[key]
