"""Request and response bodies of the review page's API (``/v1/review/...``), declared once
for validation and the OpenAPI page; errors are ``ErrorOut`` as everywhere, and a conflict
(409) adds what changed: the row as it is now, or who holds it."""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field, JsonValue, StrictBool, StrictStr

from termnorm.projects.decisions import DecisionRecord
from termnorm.projects.leases import LeasedRow
from termnorm.projects.rows import QueueEntry, RowView
from termnorm.serve.schemas import (
    NOT_BLANK,
    Count,
    ErrorItem,
    Name,
    _Strict,
    attributes_field,
    record_model,
)

__all__ = [
    "ConflictOut",
    "DecidedOut",
    "DecisionIn",
    "DecisionOut",
    "LeaseOut",
    "NextIn",
    "NextOut",
    "QueueOut",
    "QueueRowOut",
    "ReviewCandidateOut",
    "ReviewerOut",
    "RowOut",
]

MAX_COMMENT_CHARS = 4000
MAX_SKIP = 1000  # codes a page may ask to leave out of its next row


class ReviewerOut(_Strict):
    """Who the token names, in which project, and how long a lease lasts."""

    reviewer: str
    project: str
    lease_minutes: float


QueueRowOut = record_model(
    QueueEntry,
    "QueueRowOut",
    "A row of the queue: its top candidate and priority (frequency × uncertainty).",
    base=_Strict,
)


class QueueOut(_Strict):
    """The next rows open to this reviewer, and how many there are in all."""

    rows: list[QueueRowOut]  # type: ignore[valid-type]  # built by record_model
    total: int
    flagged: bool


class ReviewCandidateOut(_Strict):
    """One of the row's candidates, as mapped: the matched synonym and where it came from,
    and the concept's vocabulary attributes in the served index."""

    rank: int
    concept_id: str
    name: str
    matched_text: str | None
    source: str | None = Field(description='"ontology" or "domain" (a domain synonym).')
    term_source: str | None
    score: float
    attributes: dict[str, str] = attributes_field(
        where=" in the served index (the project's; none when it lacks the concept)"
    )


DecidedOut = record_model(
    DecisionRecord,
    "DecidedOut",
    "The decision just made, with the row's ``code``, ``state`` and ``version`` after it.",
    base=_Strict,
    types={"created_at": str},
)

DecisionOut = record_model(
    DecisionRecord,
    "DecisionOut",
    "One decision of the row's audit trail (or the one just made).",
    base=_Strict,
    exclude={"code", "state", "version"},
    types={"created_at": str},
)


LeaseOut = record_model(
    LeasedRow,
    "LeaseOut",
    "Who reviews the row, until when (ISO 8601, UTC).",
    base=_Strict,
    exclude={"row"},
    types={"expires_at": str},
)


class _Leased(_Strict):
    lease: LeaseOut | None = None  # type: ignore[valid-type]  # built by record_model


RowOut = record_model(
    RowView,
    "RowOut",
    "A row as a reviewer sees it; ``version`` is what a decision must name.",
    base=_Leased,
    types={"candidates": list[ReviewCandidateOut], "decisions": list[DecisionOut]},  # type: ignore[valid-type]
)


class NextIn(_Strict):
    """Which row to lease next: the queue's first one nobody holds, leaving out ``skip``."""

    skip: list[Name] = Field(
        default_factory=list, max_length=MAX_SKIP, description="Codes skipped this session."
    )
    flagged: StrictBool = Field(False, description="The flagged rows (second opinions) instead.")


class NextOut(_Strict):
    """The row leased (``null``: the queue is empty for this reviewer)."""

    row: RowOut | None  # type: ignore[valid-type]  # built by record_model


_DECISION_RULES: list[JsonValue] = [
    {  # what a decision's action asks of its other fields, as the server checks them (422)
        "if": {"properties": {"action": {"enum": ["approve", "no_match", "comment"]}}},
        "then": {"properties": {"concept_id": {"type": "null"}}},
    },
    {
        "if": {"properties": {"action": {"const": "pick"}}},
        "then": {"required": ["concept_id"], "properties": {"concept_id": {"type": "string"}}},
    },
    {
        "if": {"properties": {"action": {"const": "comment"}}},
        "then": {
            "required": ["comment"],
            "properties": {"comment": {"type": "string", "pattern": NOT_BLANK}},
        },
    },
]


class DecisionIn(_Strict):
    """A decision on a row as the reviewer saw it (``version``). ``pick`` needs a
    ``concept_id``; ``approve``, ``no_match`` and ``comment`` take none; ``comment`` needs
    the comment's text (else 422, ``decision_refused``)."""

    model_config = ConfigDict(json_schema_extra={"allOf": _DECISION_RULES})

    action: Literal["approve", "pick", "no_match", "flag", "comment"] = Field(
        description="approve: the top candidate; pick: concept_id (a candidate or a concept "
        "searched by hand); no_match; flag: a second opinion; comment: a note only."
    )
    version: Count = Field(ge=1, description="The row version the reviewer saw.")
    concept_id: Name | None = Field(
        None,
        description="pick (or flag): a concept of the project's index, by its ID, a bare ID "
        "(D004244 for MESH:D004244) or an alternative ID; stored as the index's own ID. "
        "An ID the index lacks is refused (422, decision_refused).",
    )
    concept_name: StrictStr | None = Field(
        None,
        max_length=1000,
        description="Optional, a check only: the concept's name as the client shows it. The "
        "decision always stores the index's name; one that differs from it (case and "
        "spacing aside) is refused (422, decision_refused), nothing written.",
    )
    predicate: Literal["exact", "broad", "narrow"] | None = Field(
        None, description="How the code relates to the concept (default exact)."
    )
    comment: StrictStr | None = Field(None, max_length=MAX_COMMENT_CHARS)


class ConflictOut(_Strict):
    """409: nothing was written; ``row`` is the row now (changed), ``lease`` who holds it."""

    detail: list[ErrorItem]
    row: RowOut | None = None  # type: ignore[valid-type]  # built by record_model
    lease: LeaseOut | None = None  # type: ignore[valid-type]  # built by record_model
