"""Does a runtime give this model's vectors on this machine? The check before any use.

A runtime other than torch fp32 (``bf16``, ``onnx``, ``onnx-int8``) is a different program
computing the same vectors, and whether it does depends on the CPU it runs on (an int8 kernel
that saturates on CPUs without VNNI returned vectors with cosine 0.90 to fp32). So a runtime
is never taken on trust: :func:`check_fidelity` encodes :data:`PROBE_TERMS` with it and with
torch fp32 on this machine, and refuses it (:class:`RuntimeFidelityError`) when the smallest
cosine between the two is below :func:`required_cosine`:

* ``onnx-int8``: :data:`INT8_MIN_COSINE` (0.995; correct int8 reaches 0.998 on
  all-MiniLM-L6-v2, the saturating kernel 0.907);
* every other runtime: :data:`~termnorm.encoders.runtime.AUTO_MIN_COSINE` (0.999), the check
  ``--runtime auto`` applies when it chooses.

:meth:`termnorm.encoders.TermEncoder.set_runtime` runs it for every explicitly chosen runtime
(``auto`` measures the same cosine itself), so neither an index build nor a query uses a
runtime that failed it; an index card records the measured cosine.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from termnorm.encoders.runtime import AUTO_MIN_COSINE, Runtime
from termnorm.errors import RuntimeFidelityError

if TYPE_CHECKING:
    from termnorm.encoders.protocols import EncoderModel, Forward

__all__ = [
    "INT8_MIN_COSINE",
    "PROBE_TERMS",
    "RuntimeFidelityError",
    "check_fidelity",
    "min_cosine",
    "required_cosine",
    "runtime_record",
]

#: the smallest probe cosine to fp32 an ``onnx-int8`` encoder must reach (module doc)
INT8_MIN_COSINE = 0.995

#: medical terms of 1 to 12 words: the probe of :func:`check_fidelity` and ``auto``
PROBE_TERMS = (
    "MI",
    "fever",
    "asthma",
    "heart attack",
    "type 2 diabetes mellitus",
    "acute myocardial infarction",
    "chronic obstructive pulmonary disease",
    "hypertrophic cardiomyopathy",
    "breast carcinoma",
    "abnormality of the kidney",
    "seizures",
    "Parkinson's disease",
    "autosomal dominant polycystic kidney disease",
    "increased serum creatine kinase",
    "short stature",
    "intellectual disability, mild",
    "retinitis pigmentosa",
    "cleft palate",
    "hearing loss, sensorineural, bilateral",
    "pain in the lower back radiating to the left leg",
    "drug-induced liver injury",
    "ventricular septal defect",
    "neutropenia",
    "loss of consciousness after head trauma with vomiting and headache",
    "BRCA1 hereditary breast and ovarian cancer syndrome",
    "Duchenne muscular dystrophy",
    "hyperkalemia",
    "colorectal adenocarcinoma",
    "nausea and vomiting",
    "abnormal gait",
    "cystic fibrosis",
    "T-cell acute lymphoblastic leukemia",
)


def min_cosine(vectors: np.ndarray, reference: np.ndarray) -> float:
    """Smallest row-wise cosine of two matrices of unit rows ``[n, d]``."""
    return float(np.min(np.sum(vectors * reference, axis=1)))


def required_cosine(runtime: Runtime) -> float:
    """The smallest probe cosine ``runtime`` must reach (module doc); torch: none (0)."""
    runtime = Runtime(runtime)
    if runtime is Runtime.TORCH:
        return 0.0
    return INT8_MIN_COSINE if runtime is Runtime.ONNX_INT8 else AUTO_MIN_COSINE


def check_fidelity(
    encoder: EncoderModel, runtime: Runtime, forward: Forward, texts: tuple[str, ...] = PROBE_TERMS
) -> float:
    """The smallest cosine between ``forward``'s (``runtime``'s) vectors of ``texts`` and
    the encoder's torch fp32 ones, after checking it reaches :func:`required_cosine`.

    Raises:
        RuntimeFidelityError: it does not; the message names the runtime, the cosine and
            what to use instead.
    """
    from termnorm.encoders.forward import TorchForward

    runtime = Runtime(runtime)
    reference = encoder.encode_with(TorchForward(encoder), list(texts))
    cosine = min_cosine(encoder.encode_with(forward, list(texts)), reference)
    needed = required_cosine(runtime)
    if cosine < needed:
        raise RuntimeFidelityError(
            f"--runtime {runtime.value} gives vectors with cosine {cosine:.4f} to torch fp32 on "
            f"this machine (at least {needed} is required): its results would differ; use "
            "--runtime torch or onnx, or auto to choose a faithful one"
        )
    return cosine


def runtime_record(encoder: object) -> dict[str, object]:
    """What an artifact card records of the runtime that made its vectors: ``runtime``, the
    probe cosine to fp32 it passed (``runtime_cosine``) and, for ``onnx-int8``, the int8
    layout of this CPU (``int8_kernel``). Encoders without a runtime count as torch."""
    runtime = Runtime(getattr(encoder, "runtime", Runtime.TORCH))
    record: dict[str, object] = {
        "runtime": runtime.value,
        "runtime_cosine": round(float(getattr(encoder, "runtime_cosine", 1.0)), 6),
    }
    if runtime is Runtime.ONNX_INT8:
        from termnorm.encoders.int8_kernel import int8_kernel

        record["int8_kernel"] = int8_kernel().value
    return record
