"""Where a batch file is normalized, in a module that imports nothing (the CLI reads it
while registering its commands). :class:`~termnorm.engines.Engine` itself lives in the
ground room: index builds choose between the same engines."""

from __future__ import annotations

from termnorm.engines import Engine

__all__ = ["ENGINE_HELP", "Engine"]

ENGINE_HELP = (
    "local: this process, resumable chunk by chunk; ray: a pool of Ray actors (--workers), "
    "each loading the index once, writing one Parquet part per input partition into the "
    "--output folder (needs the ray extra and Parquet input)."
)
