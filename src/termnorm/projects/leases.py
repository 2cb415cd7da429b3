"""Leases: a row being reviewed on the review page is reserved for its reviewer a while, so
that reviewers working at once never do the same row twice.

* :func:`acquire_next` leases the reviewer the first row of the queue (frequency ×
  uncertainty, :func:`~termnorm.projects.rows.queue_select`) that nobody else holds; a
  reviewer holds one row at a time, so their earlier lease is given back first.
  :func:`acquire` leases one row by code (or renews the reviewer's own lease).
* A lease is taken by one statement, ``INSERT ... ON CONFLICT (row_id) DO UPDATE ... WHERE
  the lease expired or is the reviewer's own``, so two reviewers racing for a row cannot
  both get it, on SQLite and on PostgreSQL alike; an expired lease is anybody's. The row is
  read again once leased: on PostgreSQL another reviewer may have decided it (and given its
  lease back) between the queue's read and the lease, and such a row is passed over.
* :func:`decide_leased` records a decision under the lease check, in one transaction: a row
  leased to someone else is :class:`~termnorm.errors.LeaseHeldError`, a row whose
  version changed since the reviewer saw it
  :class:`~termnorm.errors.StaleRowError`; a decision (not a comment) gives the
  lease back. :func:`release` gives it back without deciding (skip).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from sqlalchemy import delete, func, or_, select
from sqlalchemy.orm import Session

from termnorm.errors import LeaseHeldError, ProjectError
from termnorm.projects.decisions import DecisionRecord, decide, find_row
from termnorm.projects.models import LeaseRow, SourceRow, utcnow
from termnorm.projects.rows import RowView, queue_select, row_view
from termnorm.projects.states import Action, RowState
from termnorm.projects.store import DEFAULT_BUSY_TIMEOUT, DatabaseLike, open_project

__all__ = [
    "LEASE_MINUTES",
    "LeasedRow",
    "acquire",
    "acquire_next",
    "decide_leased",
    "queue_size",
    "release",
]

LEASE_MINUTES = 10.0
"""How long a row stays reserved for the reviewer who opened it (the page renews it)."""
_PEEK = 20  # queue rows looked at per round when racing other reviewers for a lease


@dataclass(frozen=True)
class LeasedRow:
    """A row leased to ``reviewer`` until ``expires_at`` (UTC), as the reviewer sees it."""

    row: RowView
    reviewer: str
    expires_at: datetime

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            **self.row.to_dict(),
            "lease": {"reviewer": self.reviewer, "expires_at": self.expires_at.isoformat()},
        }


def _aware(value: datetime) -> datetime:
    """``value`` as aware UTC (SQLite gives timestamps back without their zone)."""
    return value if value.tzinfo is not None else value.replace(tzinfo=timezone.utc)


def _insert(session: Session) -> Any:
    """The dialect's ``insert`` with ``on_conflict_do_update`` (SQLite and PostgreSQL)."""
    name = session.get_bind().dialect.name
    if name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as pg_insert

        return pg_insert
    if name == "sqlite":
        from sqlalchemy.dialects.sqlite import insert as sqlite_insert

        return sqlite_insert
    raise ProjectError(f"leases need SQLite or PostgreSQL, not {name}")


def _take(session: Session, row_id: int, reviewer: str, until: datetime, now: datetime) -> bool:
    """Lease ``row_id`` to ``reviewer`` until ``until`` unless someone else holds an
    unexpired lease on it (one atomic statement, see the module); whether it was taken."""
    insert = _insert(session)
    statement = insert(LeaseRow).values(row_id=row_id, reviewer=reviewer, expires_at=until)
    statement = statement.on_conflict_do_update(
        index_elements=[LeaseRow.row_id],
        set_={"reviewer": statement.excluded.reviewer, "expires_at": statement.excluded.expires_at},
        where=or_(LeaseRow.expires_at <= now, LeaseRow.reviewer == reviewer),
    )  # RETURNING: a row only when inserted or updated (rowcount is the driver's to define)
    return session.execute(statement.returning(LeaseRow.row_id)).first() is not None


def _refuse_held(session: Session, row_id: int, code: str, reviewer: str, now: datetime) -> None:
    """:class:`LeaseHeldError` when an unexpired lease on ``row_id`` is someone else's."""
    query = select(LeaseRow).where(LeaseRow.row_id == row_id, LeaseRow.expires_at > now)
    held = session.scalars(query).first()
    if held is not None and held.reviewer != reviewer:
        raise LeaseHeldError(code, held.reviewer, _aware(held.expires_at))


def _give_back(session: Session, reviewer: str, row_id: int | None = None) -> bool:
    """Drop ``reviewer``'s lease on ``row_id`` (``None``: all of their leases); whether they
    held any."""
    condition = [LeaseRow.reviewer == reviewer]
    if row_id is not None:
        condition.append(LeaseRow.row_id == row_id)
    done = session.execute(delete(LeaseRow).where(*condition))
    return bool(done.rowcount)  # type: ignore[attr-defined]


def _check_minutes(minutes: float) -> timedelta:
    if not minutes > 0:
        raise ValueError(f"a lease lasts more than 0 minutes, got {minutes}")
    return timedelta(minutes=minutes)


def acquire_next(
    project: str,
    reviewer: str,
    *,
    minutes: float = LEASE_MINUTES,
    states: tuple[RowState, ...] = (RowState.TO_REVIEW,),
    skip: Sequence[str] = (),
    db: DatabaseLike = None,
    busy_timeout: float = DEFAULT_BUSY_TIMEOUT,
) -> LeasedRow | None:
    """Lease ``reviewer`` the first row of the queue (rows in ``states``) that nobody else
    holds, leaving out the codes in ``skip`` (rows the reviewer skipped); ``None`` when
    there is none. The reviewer's other leases are given back first."""
    ttl = _check_minutes(minutes)
    with open_project(project, db, write=True, busy_timeout=busy_timeout) as (_, session, proj):
        _give_back(session, reviewer)
        wanted = {s.value for s in states}
        query = queue_select(proj.id, states, reviewer)
        if skip:
            query = query.where(SourceRow.code.not_in(list(skip)))
        offset = 0
        while True:
            rows = [r for r, *_ in session.execute(query.offset(offset).limit(_PEEK)).all()]
            for row in rows:
                now = utcnow()
                if not _take(session, row.id, reviewer, now + ttl, now):
                    continue  # another reviewer holds it
                session.refresh(row)  # decided since the queue was read? (PostgreSQL)
                if row.state in wanted and not row.retired:
                    return LeasedRow(row_view(session, row), reviewer, now + ttl)
                _give_back(session, reviewer, row.id)
            if len(rows) < _PEEK:
                return None
            offset += _PEEK


def acquire(
    project: str,
    code: str,
    reviewer: str,
    *,
    minutes: float = LEASE_MINUTES,
    db: DatabaseLike = None,
    busy_timeout: float = DEFAULT_BUSY_TIMEOUT,
) -> LeasedRow:
    """Lease the row of ``code`` to ``reviewer`` (renewing their own lease on it; their
    other leases are given back). :class:`LeaseHeldError` when someone else holds it."""
    ttl = _check_minutes(minutes)
    with open_project(project, db, write=True, busy_timeout=busy_timeout) as (_, session, proj):
        row = find_row(session, proj.id, code)
        now = utcnow()
        _refuse_held(session, row.id, code, reviewer, now)
        session.execute(
            delete(LeaseRow).where(LeaseRow.reviewer == reviewer, LeaseRow.row_id != row.id)
        )
        if not _take(session, row.id, reviewer, now + ttl, now):  # taken in between
            _refuse_held(session, row.id, code, reviewer, now)
            raise AssertionError(f"the lease on {code!r} was refused, yet nobody holds it")
        return LeasedRow(row_view(session, row), reviewer, now + ttl)


def release(
    project: str,
    code: str,
    reviewer: str,
    *,
    db: DatabaseLike = None,
    busy_timeout: float = DEFAULT_BUSY_TIMEOUT,
) -> bool:
    """Give back ``reviewer``'s lease on the row of ``code``; whether they held one."""
    with open_project(project, db, write=True, busy_timeout=busy_timeout) as (_, session, proj):
        return _give_back(session, reviewer, find_row(session, proj.id, code).id)


@contextlib.contextmanager
def _leased(session: Session, row: SourceRow, action: Action, *, reviewer: str) -> Iterator[None]:
    """The lease check around a decision (a :data:`~termnorm.projects.decisions.RowGuard`):
    :class:`LeaseHeldError` before it when another reviewer holds the row; after it, the
    reviewer's lease given back unless the action is a comment."""
    _refuse_held(session, row.id, row.code, reviewer, utcnow())
    yield
    if action is not Action.COMMENT:
        _give_back(session, reviewer, row.id)


def decide_leased(
    project: str, code: str, action: Action | str, *, reviewer: str, version: int, **decision: Any
) -> DecisionRecord:
    """``reviewer``'s decision on the row of ``code`` as they saw it at ``version``:
    :func:`~termnorm.projects.decisions.decide` (``decision``: its other keywords) under the
    lease check, refused with :class:`LeaseHeldError` when another reviewer holds the row and
    with :class:`~termnorm.errors.StaleRowError` when it changed since ``version``.
    A decision gives the reviewer's lease back; a comment keeps it."""
    guard = functools.partial(_leased, reviewer=reviewer)
    return decide(
        project, code, action, reviewer=reviewer, expect_version=version, guard=guard, **decision
    )


def queue_size(
    project: str,
    reviewer: str,
    *,
    states: tuple[RowState, ...] = (RowState.TO_REVIEW,),
    db: DatabaseLike = None,
    busy_timeout: float = DEFAULT_BUSY_TIMEOUT,
) -> int:
    """How many rows in ``states`` are open to ``reviewer`` (not leased to anyone else)."""
    with open_project(project, db, busy_timeout=busy_timeout) as (_, session, proj):
        counted = queue_select(proj.id, states, reviewer).order_by(None).subquery()
        return int(session.scalar(select(func.count()).select_from(counted)) or 0)
