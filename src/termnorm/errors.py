"""Exceptions raised by termnorm, all of them in this one module, grouped by the room that
raises them. Every message says what to do next.

The ground room: this module imports nothing of termnorm (an error whose message needs a
type from above takes plain values). The service's own HTTP signals (``ApiError``,
``QueueFullError``, ...) are not here: they never reach a user of the library.
"""

from __future__ import annotations

import shlex
from datetime import datetime

__all__ = [
    "AbbreviationError",
    "ArtifactMismatchError",
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
    "TermnormError",
    "UnknownCodeError",
    "UnknownConceptError",
    "UnknownNameError",
]

# ground: the base classes every room raises


class TermnormError(Exception):
    """Base class of the errors termnorm raises on bad input or mismatched artifacts."""


class InputFormatError(TermnormError, ValueError):
    """A file could not be parsed; the message names the file and the line."""

    def __init__(self, path: object, line: int | None, message: str) -> None:
        where = f"{path}:{line}" if line is not None else f"{path}"
        super().__init__(f"{where}: {message}")
        self.path = path
        self.line = line


class ArtifactMismatchError(TermnormError):
    """An artifact (KG, model, index) does not match what the caller expects."""


class EmptyResultError(TermnormError):
    """A job produced nothing (e.g. a KG with no concept after filtering)."""


class NotWritableError(TermnormError):
    """A folder or file termnorm must write is read-only or not permitted; the message says
    what to change (``TERMNORM_CACHE`` for the cache, another ``--out`` for outputs)."""


class MissingExtraError(TermnormError, ImportError):
    """An optional dependency is absent; the message names the extra to install."""

    def __init__(self, package: str, extra: str) -> None:
        super().__init__(f"{package} is required for this feature: pip install 'termnorm[{extra}]'")


class UnknownNameError(TermnormError, ValueError):
    """A name given for an extension point (a KG format, a detector, an export, an objective,
    a stage) is not registered; the message lists the known names and the closest one."""


# io: outputs and resumable jobs


class OutputBusyError(TermnormError, RuntimeError):
    """Another process is writing the same output."""


class ResumeError(TermnormError, ValueError):
    """An unfinished job's work folder does not belong to the job asked for now."""


# engines: Ray


class RayWorkerError(TermnormError):
    """A Ray worker could not do its part of a job; the message is the worker's error."""


# mentions: abbreviations


class AbbreviationError(TermnormError):
    """Ab3P could not read one document's abbreviations (it crashed or failed on the text);
    the document itself is fine and is normalized without its short forms."""


# encoders: devices and runtimes


class DeviceUnavailableError(TermnormError):
    """The device asked for cannot run the encoder here; the message says what to use."""


class RuntimeUnavailableError(TermnormError):
    """A runtime cannot run here (e.g. bf16 on a CPU without bfloat16 support)."""


class RuntimeFidelityError(RuntimeUnavailableError):
    """A runtime's vectors are too far from torch fp32's on this machine: it is refused."""


class Int8KernelError(RuntimeUnavailableError):
    """No int8 layout multiplies exactly on this CPU: int8 cannot be used."""


# index: concept lookups


class UnknownConceptError(TermnormError, KeyError):
    """No concept of the index has this ID (nor lists it as an alternative ID)."""

    def __init__(self, concept_id: str, where: str) -> None:
        super().__init__(
            f"no concept {concept_id!r} in {where}, neither as a concept ID nor as an "
            "alternative ID; check the ID (a namespace is optional: 'D005955' finds "
            "'MESH:D005955') or the index"
        )
        self.concept_id = concept_id

    def __str__(self) -> str:  # KeyError would show the message quoted
        return str(self.args[0])


# search: queries, filters and specs


class QueryError(TermnormError, ValueError):
    """A query cannot be normalized (empty, whitespace-only, not text, too long)."""

    def __init__(self, message: str, row: int | None = None) -> None:
        super().__init__(message if row is None else f"row {row}: {message}")
        self.row = row


class FilterError(TermnormError, ValueError):
    """A filter names a namespace or semantic type the index does not have."""


class SpecError(TermnormError, ValueError):
    """A spec setting this search space cannot serve; ``field`` names it (the service's 422)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


class EmptySpecError(SpecError, EmptyResultError):
    """A :class:`SpecError` whose cause left nothing to search (a D target without domain
    synonyms, a filter that keeps no concept): still an ``EmptyResultError``."""


# annotate: documents


class DocumentError(TermnormError, ValueError):
    """A document that cannot be annotated (not text, too long); names the document."""

    def __init__(self, doc_id: str, message: str) -> None:
        super().__init__(f"document {doc_id!r}: {message}")
        self.doc_id = doc_id


# projects: mapping projects


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


# serve: the synonym store


class SynonymStoreError(TermnormError):
    """Synonyms could not be written to the store; nothing of the call was kept."""
