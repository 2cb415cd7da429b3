"""Which device runs an encoder: ``cpu``, ``cuda`` or ``auto`` (import-free; torch is
imported by :func:`resolve_device` only).

``auto`` is ``cuda`` when torch sees a GPU and the runtime can run there (``torch``, ``bf16``;
ONNX Runtime is used with its CPU provider only), else ``cpu``. ``cuda`` asked for where
torch sees no GPU, or with an ONNX runtime, is refused with :class:`DeviceUnavailableError`.
"""

from __future__ import annotations

from enum import Enum

from termnorm.encoders.runtime import Runtime
from termnorm.errors import DeviceUnavailableError

__all__ = ["DEVICE_HELP", "GPU_RUNTIMES", "Device", "DeviceUnavailableError", "resolve_device"]


class Device(str, Enum):
    """Where the encoder runs (module doc)."""

    AUTO = "auto"
    CPU = "cpu"
    CUDA = "cuda"


DEVICE_HELP = (
    "Where the encoder runs: cpu, cuda (a GPU; with --engine ray each worker asks Ray for "
    "one), or auto (cuda when a GPU is there and the runtime runs on it, else cpu)."
)

#: the runtimes that run on a GPU (ONNX Runtime runs with its CPU provider)
GPU_RUNTIMES = (Runtime.TORCH, Runtime.BF16)


def resolve_device(device: Device | str, runtime: Runtime | str, gpus: int | None = None) -> str:
    """``"cpu"`` or ``"cuda"`` for ``device`` and ``runtime`` (module doc).

    ``gpus``: how many GPUs the machines that will run the encoder have (a Ray cluster's);
    ``None``: this process' (``torch.cuda.device_count()``).

    Raises:
        DeviceUnavailableError: ``cuda`` without a GPU, or with an ONNX runtime.
    """
    device = Device(device)
    if device is Device.CPU:
        return "cpu"
    if gpus is None:
        import torch

        gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if device is Device.AUTO:
        return "cuda" if gpus > 0 and Runtime(runtime) in GPU_RUNTIMES else "cpu"
    runtime = Runtime(runtime)
    if runtime not in GPU_RUNTIMES:
        raise DeviceUnavailableError(
            f"--device cuda runs the runtimes {', '.join(r.value for r in GPU_RUNTIMES)}; "
            f"--runtime {runtime.value} runs on the CPU only: use --runtime torch with "
            "--device cuda, or --device cpu"
        )
    if gpus < 1:
        raise DeviceUnavailableError(
            "--device cuda: no GPU is available here (torch.cuda.is_available() is False, or "
            "the Ray cluster has no GPU); use --device cpu, or --device auto to use a GPU "
            "only where there is one"
        )
    return "cuda"
