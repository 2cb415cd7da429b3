"""The words of a mapping project, in a module that imports nothing (the CLI reads them while
it registers its commands): a row's state, a decision's action, a mapping's predicate, the
export formats."""

from __future__ import annotations

from enum import Enum

__all__ = ["Action", "ExportFormat", "Predicate", "RowState"]


class RowState(str, Enum):
    """Where a source row stands. ``to_map`` has no candidates yet (``map run`` gives them);
    ``to_review`` has candidates and no decision; the others are the row's current decision.
    A row missing from a newer source file is *retired* besides (a flag, not a state)."""

    TO_MAP = "to_map"
    TO_REVIEW = "to_review"
    APPROVED = "approved"
    AUTO_APPROVED = "auto_approved"
    NO_MATCH = "no_match"
    FLAGGED = "flagged"


class Action(str, Enum):
    """What a decision did. ``approve`` takes the top candidate, ``pick`` another concept;
    ``comment`` only annotates (the row's state and version stay)."""

    APPROVE = "approve"
    PICK = "pick"
    NO_MATCH = "no_match"
    FLAG = "flag"
    COMMENT = "comment"
    AUTO_APPROVE = "auto_approve"

    @property
    def state(self) -> RowState | None:
        """The row's state after this action (``None``: unchanged)."""
        return _STATE_AFTER[self]


_STATE_AFTER = {
    Action.APPROVE: RowState.APPROVED,
    Action.PICK: RowState.APPROVED,
    Action.NO_MATCH: RowState.NO_MATCH,
    Action.FLAG: RowState.FLAGGED,
    Action.COMMENT: None,
    Action.AUTO_APPROVE: RowState.AUTO_APPROVED,
}


class Predicate(str, Enum):
    """How the source code relates to the concept (SKOS mapping relations)."""

    EXACT = "exact"
    BROAD = "broad"
    NARROW = "narrow"

    @property
    def skos(self) -> str:
        """The SKOS CURIE: ``skos:exactMatch``, ``skos:broadMatch``, ``skos:narrowMatch``."""
        return f"skos:{self.value}Match"


class ExportFormat(str, Enum):
    """``termnorm map export --format``: SSSOM TSV, OMOP ``source_to_concept_map`` CSV, a
    plain CSV of every row, a ``concept_id<TAB>text`` synonyms file of the approved
    exact mappings (what ``--synonyms`` reads), OHDSI Usagi's mapping CSV, or a FHIR
    ConceptMap (JSON)."""

    SSSOM = "sssom"
    OMOP = "omop"
    CSV = "csv"
    SYNONYMS = "synonyms"
    USAGI = "usagi"
    FHIR = "fhir"
