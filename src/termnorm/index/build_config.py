"""Who encodes an index build's shards and where: one dataclass, its help texts the CLI
reuses (import-free: the CLI reads it while registering its commands)."""

from __future__ import annotations

from dataclasses import dataclass

from termnorm.encoders.device import Device
from termnorm.engines import Engine

__all__ = ["DEFAULT_SHARD_SIZE", "SCALE_HELP", "ScaleConfig"]

DEFAULT_SHARD_SIZE = 1 << 14
"""Distinct strings per shard: ~20-60 s of one CPU core with MiniLM, 24 MiB of float16
vectors at d=768; small enough for a smooth progress bar and balanced Ray workers."""

SCALE_HELP = {
    "engine": "local: this process; ray: a pool of Ray actors (--workers), each loading the "
    "model once and encoding whole shards (needs the ray extra). Both give the same vectors.",
    "workers": "Ray actors (--engine ray; default 1), one CPU (or GPU) each.",
    "address": "A running Ray cluster (e.g. ray://head:10001 or auto) instead of a local Ray "
    "(--engine ray); every node needs termnorm and the model folder at the same path.",
    "shard_size": "Distinct strings per shard: the unit of work, of resuming and of the "
    "encoder's batches (builds agree bit for bit only with the same shard size).",
}


@dataclass(frozen=True)
class ScaleConfig:
    """Who encodes the shards (``engine``, ``workers``, ``address``), how big they are
    (``shard_size``) and on which ``device`` (see :mod:`termnorm.encoders.device`)."""

    engine: Engine = Engine.LOCAL
    workers: int | None = None
    address: str | None = None
    shard_size: int = DEFAULT_SHARD_SIZE
    device: Device = Device.AUTO

    def __post_init__(self) -> None:
        object.__setattr__(self, "engine", Engine(self.engine))
        object.__setattr__(self, "device", Device(self.device))
        if self.engine is Engine.LOCAL and (self.workers is not None or self.address):
            raise ValueError(
                "--workers and --address choose Ray workers: add --engine ray, or drop them"
            )
        if self.workers is not None and self.workers < 1:
            raise ValueError(f"--workers must be at least 1, got {self.workers}")
        if self.shard_size < 1:
            raise ValueError(f"--shard-size must be at least 1, got {self.shard_size}")
