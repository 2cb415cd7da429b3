"""OHDSI Usagi's mapping CSV: its layout, which ``termnorm map export --format usagi``
(:mod:`termnorm.projects.exports.usagi`) writes and ``termnorm map import-usagi`` reads.

**Layout** (what Usagi's ``WriteCodeMappingsToFile`` writes and ``ReadCodeMappingsFromFile``
reads): a header, then one row per source code and target concept — ``sourceCode``,
``sourceName``, ``sourceFrequency``, ``sourceAutoAssignedConceptIds``, ``ADD_INFO:<name>``
columns, ``matchScore``, ``mappingStatus``, ``equivalence``, ``statusSetBy``,
``statusSetOn`` (epoch milliseconds), ``conceptId`` (OMOP's integer; 0 = none),
``conceptName``, ``domainId``, ``mappingType``, ``comment``, ``createdBy``, ``createdOn``,
``assignedReviewer``. A project holds one concept per code, so it writes one row per code.

The way back, :func:`~termnorm.projects.usagi_import.import_usagi`, is
:mod:`termnorm.projects.usagi_import`.
"""

from __future__ import annotations

from enum import Enum

from termnorm.projects.states import Predicate

__all__ = [
    "ADD_INFO",
    "PREDICATE_OF",
    "USAGI_COLUMNS",
    "Equivalence",
    "MappingStatus",
]

ADD_INFO = "ADD_INFO:"
"""Prefix of Usagi's additional-information columns (a project's context columns)."""
SOURCE_COLUMNS = ("sourceCode", "sourceName", "sourceFrequency", "sourceAutoAssignedConceptIds")
MAPPING_COLUMNS = (
    "matchScore", "mappingStatus", "equivalence", "statusSetBy", "statusSetOn", "conceptId",
    "conceptName", "domainId", "mappingType", "comment", "createdBy", "createdOn",
    "assignedReviewer",
)  # fmt: skip
USAGI_COLUMNS = (*SOURCE_COLUMNS, *MAPPING_COLUMNS)
"""Usagi's columns, in its order (the ``ADD_INFO:`` columns go between the two groups)."""


class MappingStatus(str, Enum):
    """Usagi's ``mappingStatus``."""

    APPROVED = "APPROVED"
    UNCHECKED = "UNCHECKED"
    AUTO_MAPPED = "AUTO_MAPPED"
    AUTO_MAPPED_TO_1 = "AUTO_MAPPED_TO_1"
    INVALID_TARGET = "INVALID_TARGET"
    FLAGGED = "FLAGGED"
    IGNORED = "IGNORED"


class Equivalence(str, Enum):
    """Usagi's ``equivalence`` (FHIR's concept-map equivalence, as Usagi names it)."""

    EQUAL = "EQUAL"
    EQUIVALENT = "EQUIVALENT"
    WIDER = "WIDER"
    NARROWER = "NARROWER"
    INEXACT = "INEXACT"
    UNMATCHED = "UNMATCHED"
    UNREVIEWED = "UNREVIEWED"


PREDICATE_OF = {
    Equivalence.EQUAL: Predicate.EXACT,
    Equivalence.EQUIVALENT: Predicate.EXACT,
    Equivalence.UNREVIEWED: Predicate.EXACT,
    Equivalence.WIDER: Predicate.BROAD,
    Equivalence.NARROWER: Predicate.NARROW,
}
