"""The reviewers of a project: a name and a token that says who is deciding on the review page.

``add_reviewer`` makes a random token and stores only its SHA-256 (a token is 192 random
bits, so a plain hash cannot be reversed; a stolen database gives no token away): the token
is shown once, to be handed to the person. ``reviewer_of`` turns a token back into the
reviewer's name, which every decision made with it carries. ``--rotate`` gives a reviewer a
new token (the old one stops working); removing a reviewer keeps their decisions.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from termnorm.errors import ReviewerError
from termnorm.projects.models import JsonReady, ReviewerRow, utcnow
from termnorm.projects.storable import storable_problem
from termnorm.projects.store import DEFAULT_BUSY_TIMEOUT, DatabaseLike, open_project

__all__ = [
    "NewReviewer",
    "ReviewerInfo",
    "add_reviewer",
    "list_reviewers",
    "remove_reviewer",
    "reviewer_for_token",
    "reviewer_of",
    "token_digest",
]

logger = logging.getLogger(__name__)

TOKEN_PREFIX = "tnr_"
"""Tokens start with this, so a leaked one is recognisable (secret scanners, logs)."""
_TOKEN_BYTES = 24
_MAX_NAME = 200


@dataclass(frozen=True)
class NewReviewer(JsonReady):
    """A reviewer just added (or given a new token): the token, shown only now."""

    project: str
    name: str
    token: str


@dataclass(frozen=True)
class ReviewerInfo(JsonReady):
    """A reviewer as listed: name and when their token was made."""

    name: str
    created_at: datetime


def token_digest(token: str) -> str:
    """The SHA-256 (hex) of ``token``: what the database keeps."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def _check_name(name: str) -> str:
    problem = storable_problem(name, "the reviewer's name")
    if problem:
        raise ReviewerError(problem)
    name = name.strip()
    if not name or len(name) > _MAX_NAME:
        raise ReviewerError(
            f"a reviewer's name is 1 to {_MAX_NAME} characters (what their decisions carry), "
            f"got {name!r}"
        )
    return name


def add_reviewer(
    project: str,
    name: str,
    *,
    rotate: bool = False,
    db: DatabaseLike = None,
    busy_timeout: float = DEFAULT_BUSY_TIMEOUT,
) -> NewReviewer:
    """Add reviewer ``name`` to ``project`` with a new token (returned, never stored).

    A name already there is :class:`ReviewerError` unless ``rotate``, which gives that
    reviewer a new token (the old one stops working at once)."""
    name = _check_name(name)
    token = TOKEN_PREFIX + secrets.token_urlsafe(_TOKEN_BYTES)
    with open_project(project, db, write=True, busy_timeout=busy_timeout) as (_, session, proj):
        query = select(ReviewerRow).where(
            ReviewerRow.project_id == proj.id, ReviewerRow.name == name
        )
        found = session.scalars(query).first()
        if found is not None and not rotate:
            raise ReviewerError(
                f"{project} has a reviewer {name!r} already: give them a new token with "
                f"termnorm map reviewer add {project} {name!r} --rotate"
            )
        if found is None:
            found = ReviewerRow(project_id=proj.id, name=name)
            session.add(found)
        found.token_sha256 = token_digest(token)
        found.created_at = utcnow()
    logger.info("%s: reviewer %s %s", project, name, "given a new token" if rotate else "added")
    return NewReviewer(project, name, token)


def list_reviewers(
    project: str, *, db: DatabaseLike = None, busy_timeout: float = DEFAULT_BUSY_TIMEOUT
) -> list[ReviewerInfo]:
    """The reviewers of ``project``, by name."""
    with open_project(project, db, busy_timeout=busy_timeout) as (_, session, proj):
        rows = session.scalars(
            select(ReviewerRow).where(ReviewerRow.project_id == proj.id).order_by(ReviewerRow.name)
        ).all()
        return [ReviewerInfo(r.name, r.created_at) for r in rows]


def remove_reviewer(
    project: str,
    name: str,
    *,
    db: DatabaseLike = None,
    busy_timeout: float = DEFAULT_BUSY_TIMEOUT,
) -> None:
    """Remove reviewer ``name`` (their token stops working; their decisions stay);
    :class:`ReviewerError` when ``project`` has no such reviewer."""
    with open_project(project, db, write=True, busy_timeout=busy_timeout) as (_, session, proj):
        done = session.execute(
            delete(ReviewerRow).where(
                ReviewerRow.project_id == proj.id, ReviewerRow.name == name.strip()
            )
        )
        if done.rowcount != 1:  # type: ignore[attr-defined]
            raise ReviewerError(
                f"{project} has no reviewer {name!r} (list them: termnorm map reviewer list "
                f"{project})"
            )


def reviewer_of(session: Session, project_id: int, token: str) -> str | None:
    """The name of the project's reviewer whose token is ``token``, or ``None``."""
    query = select(ReviewerRow.name).where(
        ReviewerRow.project_id == project_id, ReviewerRow.token_sha256 == token_digest(token)
    )
    return session.scalars(query).first()


def reviewer_for_token(
    project: str, token: str, *, db: DatabaseLike = None, busy_timeout: float = DEFAULT_BUSY_TIMEOUT
) -> str | None:
    """The name of ``project``'s reviewer whose token is ``token``, or ``None``."""
    with open_project(project, db, busy_timeout=busy_timeout) as (_, session, proj):
        return reviewer_of(session, proj.id, token)
