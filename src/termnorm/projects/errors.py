"""The errors of mapping projects; every message says what to do next."""

from __future__ import annotations

import shlex
from datetime import datetime

from termnorm.errors import InputFormatError, TermnormError

__all__ = [
    "DatabaseBusyError",
    "DatabaseUnreachableError",
    "DecisionError",
    "DuplicateCodesError",
    "LeaseHeldError",
    "ProjectError",
    "ProjectExistsError",
    "ProjectNotFoundError",
    "ReviewerError",
    "SchemaTooNewError",
    "SourceChangedError",
    "StaleRowError",
    "UnknownCodeError",
]


class ProjectError(TermnormError):
    """A mapping project cannot do what was asked."""


class ProjectNotFoundError(ProjectError, LookupError):
    """No project of this name in the database."""


class ProjectExistsError(ProjectError):
    """``init`` on a project that exists (a new version of its list is ``map apply``)."""


class UnknownCodeError(ProjectError, KeyError):
    """No row with this code in the project."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


class DecisionError(ProjectError, ValueError):
    """A decision that cannot be made (no candidate to approve, a retired row, ...)."""


class StaleRowError(ProjectError):
    """A decision against a row version that is no longer current: someone (or a run)
    changed the row since the reviewer saw it. Nothing was written."""

    def __init__(self, code: str, expected: int, current: int, project: str = "PROJECT") -> None:
        super().__init__(
            f"row {code!r} changed since version {expected} (now version {current}): nothing "
            f"written; look at the row again (termnorm map show {project} {shlex.quote(code)}: "
            f"its candidates and decisions) and decide with --expect-version {current}"
        )
        self.code = code
        self.expected = expected
        self.current = current


class LeaseHeldError(ProjectError):
    """The row is leased to another reviewer (the review page): nothing was written."""

    def __init__(self, code: str, holder: str, expires_at: datetime) -> None:
        super().__init__(
            f"row {code!r} is being reviewed by {holder} until {expires_at:%H:%M:%S} UTC: "
            "nothing written; take the next row (their lease ends on their decision, or "
            "when it expires)"
        )
        self.code = code
        self.holder = holder
        self.expires_at = expires_at


class ReviewerError(ProjectError, ValueError):
    """A reviewer that cannot be added (the name is taken) or is not there (to remove)."""


class DuplicateCodesError(InputFormatError):
    """A source file has a code on more than one row; the message lists them."""


class SourceChangedError(ProjectError):
    """The source file a project was made from changed since (its SHA-256 differs)."""


class SchemaTooNewError(ProjectError):
    """The database was written by a newer termnorm (an unknown schema revision)."""


class DatabaseBusyError(ProjectError):
    """The database stayed locked by another writer past the busy timeout."""


class DatabaseUnreachableError(ProjectError):
    """The database server could not be reached (or refused the connection), or a SQLite
    file could not be opened or created (its folder is read-only, say)."""
