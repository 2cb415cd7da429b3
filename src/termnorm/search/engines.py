"""Where a batch file is normalized, in a module that imports nothing (the CLI reads it
while registering its commands)."""

from __future__ import annotations

from enum import Enum

__all__ = ["ENGINE_HELP", "Engine"]


class Engine(str, Enum):
    """``local``: this process, chunk by chunk (:mod:`termnorm.search.batch`); ``ray``: Ray
    Data actors, one output part per partition (:mod:`termnorm.search.ray_batch`)."""

    LOCAL = "local"
    RAY = "ray"


ENGINE_HELP = (
    "local: this process, resumable chunk by chunk; ray: a pool of Ray actors (--workers), "
    "each loading the index once, writing one Parquet part per input partition into the "
    "--output folder (needs the ray extra and Parquet input)."
)
