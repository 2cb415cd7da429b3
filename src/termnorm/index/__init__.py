"""Vectors → searchable store: exact and faiss backends, and the saved term index.

Names resolve lazily, so importing a light submodule (``termnorm.index.base`` for the CLI's
backend choices) does not load pandas or pyarrow.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from termnorm._lazy import lazy_getattr

__all__ = [
    "Backend",
    "BackendSpec",
    "ExactIndex",
    "FaissIndex",
    "ScaleConfig",
    "SearchResult",
    "TermIndex",
    "VectorIndex",
    "build_index_folder",
    "choose_backend",
    "exact_search",
    "merge_results",
    "parse_bytes",
]

_NAMES = {  # module: the names it gives
    "base": "Backend SearchResult VectorIndex",
    "build": "build_index_folder",
    "build_config": "ScaleConfig",
    "choose": "BackendSpec choose_backend parse_bytes",
    "exact": "ExactIndex exact_search merge_results",
    "faiss_backend": "FaissIndex",
    "term_index": "TermIndex",
}

if TYPE_CHECKING:  # pragma: no cover
    from termnorm.index.base import Backend, SearchResult, VectorIndex
    from termnorm.index.build import build_index_folder
    from termnorm.index.build_config import ScaleConfig
    from termnorm.index.choose import BackendSpec, choose_backend, parse_bytes
    from termnorm.index.exact import ExactIndex, exact_search, merge_results
    from termnorm.index.faiss_backend import FaissIndex
    from termnorm.index.term_index import TermIndex


__getattr__ = lazy_getattr(__name__, {n: m for m, names in _NAMES.items() for n in names.split()})
