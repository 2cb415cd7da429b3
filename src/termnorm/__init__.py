"""termnorm: knowledge-infused medical term embeddings and concept normalization.

The public API is a set of thin functions over lazily built objects (see :mod:`termnorm.api`),
the main classes they return and the errors they raise, every one a :class:`TermnormError`;
importing this package does no work (no model, index or terminology is loaded: every name
resolves on first use, and ``dir(termnorm)`` lists them all).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from termnorm._lazy import lazy_dir, lazy_getattr
from termnorm._version import __version__

# the module under termnorm that defines each public name
_NAMES = {
    "api": "add_synonyms annotate build_index load_index load_kg load_ranker lookup normalize "
    "normalize_file train",
    "annotate.pipeline": "DocumentError",
    "index.term_index": "TermIndex",
    "kg.graph": "KnowledgeGraph",
    "search.candidate": "Candidate",
    "index.lookup": "ConceptInfo UnknownConceptError",
    "errors": "TermnormError InputFormatError ArtifactMismatchError EmptyResultError "
    "NotWritableError MissingExtraError UnknownNameError",
    "encoders.device": "DeviceUnavailableError",
    "encoders.fidelity": "RuntimeFidelityError",
    "encoders.int8_kernel": "Int8KernelError",
    "encoders.runtime": "RuntimeUnavailableError",
    "engines": "RayWorkerError",
    "io.output_lock": "OutputBusyError",
    "io.resumable": "ResumeError",
    "mentions.abbreviations": "AbbreviationError",
    "projects.errors": "ProjectError ProjectNotFoundError ProjectExistsError UnknownCodeError "
    "DecisionError StaleRowError LeaseHeldError ReviewerError DuplicateCodesError "
    "SourceChangedError SchemaTooNewError DatabaseBusyError DatabaseUnreachableError",
    "search.build": "SpecError EmptySpecError",
    "search.filters": "FilterError",
    "search.query": "QueryError",
    "serve.synonym_store": "SynonymStoreError",
}

__all__ = [
    "AbbreviationError",
    "ArtifactMismatchError",
    "Candidate",
    "ConceptInfo",
    "DatabaseBusyError",
    "DatabaseUnreachableError",
    "DecisionError",
    "DeviceUnavailableError",
    "DocumentError",
    "DuplicateCodesError",
    "EmptyResultError",
    "EmptySpecError",
    "FilterError",
    "InputFormatError",
    "Int8KernelError",
    "KnowledgeGraph",
    "LeaseHeldError",
    "MissingExtraError",
    "NotWritableError",
    "OutputBusyError",
    "ProjectError",
    "ProjectExistsError",
    "ProjectNotFoundError",
    "QueryError",
    "RayWorkerError",
    "ResumeError",
    "ReviewerError",
    "RuntimeFidelityError",
    "RuntimeUnavailableError",
    "SchemaTooNewError",
    "SourceChangedError",
    "SpecError",
    "StaleRowError",
    "SynonymStoreError",
    "TermIndex",
    "TermnormError",
    "UnknownCodeError",
    "UnknownConceptError",
    "UnknownNameError",
    "__version__",
    "add_synonyms",
    "annotate",
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
    from termnorm.annotate.pipeline import DocumentError
    from termnorm.api import (
        add_synonyms,
        annotate,
        build_index,
        load_index,
        load_kg,
        load_ranker,
        lookup,
        normalize,
        normalize_file,
        train,
    )
    from termnorm.encoders.device import DeviceUnavailableError
    from termnorm.encoders.fidelity import RuntimeFidelityError
    from termnorm.encoders.int8_kernel import Int8KernelError
    from termnorm.encoders.runtime import RuntimeUnavailableError
    from termnorm.engines import RayWorkerError
    from termnorm.errors import (
        ArtifactMismatchError,
        EmptyResultError,
        InputFormatError,
        MissingExtraError,
        NotWritableError,
        TermnormError,
        UnknownNameError,
    )
    from termnorm.index.lookup import ConceptInfo, UnknownConceptError
    from termnorm.index.term_index import TermIndex
    from termnorm.io.output_lock import OutputBusyError
    from termnorm.io.resumable import ResumeError
    from termnorm.kg.graph import KnowledgeGraph
    from termnorm.mentions.abbreviations import AbbreviationError
    from termnorm.projects.errors import (
        DatabaseBusyError,
        DatabaseUnreachableError,
        DecisionError,
        DuplicateCodesError,
        LeaseHeldError,
        ProjectError,
        ProjectExistsError,
        ProjectNotFoundError,
        ReviewerError,
        SchemaTooNewError,
        SourceChangedError,
        StaleRowError,
        UnknownCodeError,
    )
    from termnorm.search.build import EmptySpecError, SpecError
    from termnorm.search.candidate import Candidate
    from termnorm.search.filters import FilterError
    from termnorm.search.query import QueryError
    from termnorm.serve.synonym_store import SynonymStoreError

__getattr__ = lazy_getattr(__name__, {n: m for m, names in _NAMES.items() for n in names.split()})
__dir__ = lazy_dir(__all__)
