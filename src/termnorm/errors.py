"""Exceptions raised by termnorm. Every message says what to do next."""

from __future__ import annotations


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
