"""termnorm: knowledge-infused medical term embeddings and concept normalization.

The public API is a set of thin functions over lazily built objects (see :mod:`termnorm.api`),
the main classes they return and the errors they raise; importing this package does no work
(no model, index or terminology is loaded: every name resolves on first use).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from termnorm._version import __version__

# public name -> the module that defines it
_EXPORTS = {
    "add_synonyms": "termnorm.api",
    "build_index": "termnorm.api",
    "load_index": "termnorm.api",
    "load_kg": "termnorm.api",
    "load_ranker": "termnorm.api",
    "lookup": "termnorm.api",
    "normalize": "termnorm.api",
    "normalize_file": "termnorm.api",
    "train": "termnorm.api",
    "TermIndex": "termnorm.index.term_index",
    "KnowledgeGraph": "termnorm.kg.graph",
    "Candidate": "termnorm.search.candidate",
    "ConceptInfo": "termnorm.index.lookup",
    "TermnormError": "termnorm.errors",
    "InputFormatError": "termnorm.errors",
    "ArtifactMismatchError": "termnorm.errors",
    "EmptyResultError": "termnorm.errors",
    "NotWritableError": "termnorm.errors",
    "MissingExtraError": "termnorm.errors",
    "QueryError": "termnorm.search.query",
}

__all__ = [
    "ArtifactMismatchError",
    "Candidate",
    "ConceptInfo",
    "EmptyResultError",
    "InputFormatError",
    "KnowledgeGraph",
    "MissingExtraError",
    "NotWritableError",
    "QueryError",
    "TermIndex",
    "TermnormError",
    "__version__",
    "add_synonyms",
    "build_index",
    "load_index",
    "load_kg",
    "load_ranker",
    "lookup",
    "normalize",
    "normalize_file",
    "train",
]

if TYPE_CHECKING:  # pragma: no cover
    from termnorm.api import (
        add_synonyms,
        build_index,
        load_index,
        load_kg,
        load_ranker,
        lookup,
        normalize,
        normalize_file,
        train,
    )
    from termnorm.errors import (
        ArtifactMismatchError,
        EmptyResultError,
        InputFormatError,
        MissingExtraError,
        NotWritableError,
        TermnormError,
    )
    from termnorm.index.lookup import ConceptInfo
    from termnorm.index.term_index import TermIndex
    from termnorm.kg.graph import KnowledgeGraph
    from termnorm.search.candidate import Candidate
    from termnorm.search.query import QueryError


def __getattr__(name: str) -> Any:
    """Resolve the public names lazily so that ``import termnorm`` stays cheap."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'termnorm' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
