"""The PyKEEN dependency: an optional extra (``pip install 'termnorm[kge]'``)."""

from __future__ import annotations

import importlib.util
from importlib import metadata

from termnorm.errors import MissingExtraError

__all__ = ["require_pykeen"]


def require_pykeen() -> str:
    """PyKEEN's version; :class:`MissingExtraError` naming the ``kge`` extra when absent."""
    if importlib.util.find_spec("pykeen") is None:
        raise MissingExtraError("pykeen", "kge")
    return metadata.version("pykeen")
