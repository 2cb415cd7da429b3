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
    "index.term_index": "TermIndex",
    "kg.graph": "KnowledgeGraph",
    "search.candidate": "Candidate",
    "index.lookup": "ConceptInfo",
    "errors": "AbbreviationError ArtifactMismatchError DatabaseBusyError DatabaseUnreachableError DecisionError DeviceUnavailableError DocumentError DuplicateCodesError EmptyResultError EmptySpecError FilterError InputFormatError Int8KernelError LeaseHeldError MissingExtraError NotWritableError OutputBusyError ProjectError ProjectExistsError ProjectNotFoundError QueryError RayWorkerError ResumeError ReviewerError RuntimeFidelityError RuntimeUnavailableError SchemaTooNewError SourceChangedError SpecError StaleRowError SynonymStoreError TermnormError UnknownCodeError UnknownConceptError UnknownNameError",
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
    from termnorm.errors import (
        AbbreviationError,
        ArtifactMismatchError,
        DatabaseBusyError,
        DatabaseUnreachableError,
        DecisionError,
        DeviceUnavailableError,
        DocumentError,
        DuplicateCodesError,
        EmptyResultError,
        EmptySpecError,
        FilterError,
        InputFormatError,
        Int8KernelError,
        LeaseHeldError,
        MissingExtraError,
        NotWritableError,
        OutputBusyError,
        ProjectError,
        ProjectExistsError,
        ProjectNotFoundError,
        QueryError,
        RayWorkerError,
        ResumeError,
        ReviewerError,
        RuntimeFidelityError,
        RuntimeUnavailableError,
        SchemaTooNewError,
        SourceChangedError,
        SpecError,
        StaleRowError,
        SynonymStoreError,
        TermnormError,
        UnknownCodeError,
        UnknownConceptError,
        UnknownNameError,
    )
    from termnorm.index.lookup import ConceptInfo
    from termnorm.index.term_index import TermIndex
    from termnorm.kg.graph import KnowledgeGraph
    from termnorm.search.candidate import Candidate

__getattr__ = lazy_getattr(__name__, {n: m for m, names in _NAMES.items() for n in names.split()})
__dir__ = lazy_dir(__all__)
