"""The PyKEEN dependency: an optional extra (``pip install 'termnorm[kge]'``), and the
settings that keep its notices out of a termnorm run."""

from __future__ import annotations

import importlib.util
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import metadata

from termnorm.errors import MissingExtraError

# Loggers whose warnings say nothing a termnorm user can act on: torch_max_mem warns on every
# evaluation on CPU that CPU memory is "not considered safe" for its batch-size search.
_QUIET_LOGGERS = ("torch_max_mem",)


def require_pykeen() -> str:
    """PyKEEN's version; :class:`MissingExtraError` naming the ``kge`` extra when absent."""
    if importlib.util.find_spec("pykeen") is None:
        raise MissingExtraError("pykeen", "kge")
    return metadata.version("pykeen")


def pykeen_device(device: str | None) -> str:
    """``device``, or CUDA when present else CPU: given explicitly, PyKEEN does not warn
    "No cuda devices were available" on every CPU run."""
    if device:
        return device
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


@contextmanager
def quiet_pykeen() -> Iterator[None]:
    """Within the block, the loggers of :data:`_QUIET_LOGGERS` show errors only (their levels
    are restored after it); PyKEEN's own warnings still show."""
    loggers = [logging.getLogger(name) for name in _QUIET_LOGGERS]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.ERROR)
    try:
        yield
    finally:
        for lg, level in zip(loggers, levels, strict=True):
            lg.setLevel(level)
