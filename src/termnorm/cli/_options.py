"""Options and help texts that several commands declare the same way.

``--overwrite`` follows :func:`termnorm._artifacts.prepare_output`'s rule: without it an
existing non-empty ``--out`` is refused; with it that folder is replaced atomically once the
work is done. An ``--out`` that is, holds or lies inside one of the command's inputs is refused
either way. ``--db`` and ``--json`` are every ``termnorm map`` command's. Help shared with the
library is escaped for Typer's Rich help, which reads ``[word]`` as markup and drops it
(``termnorm[onnx]`` showed as ``termnorm``).
"""

from __future__ import annotations

from typing import Any

import typer
from rich.markup import escape

from termnorm.encoders.runtime import RUNTIME_HELP as _RUNTIME_HELP

__all__ = ["DB_HELP", "RUNTIME_HELP", "db_option", "json_option", "overwrite_option"]

RUNTIME_HELP = escape(_RUNTIME_HELP)
"""``--runtime``'s help (:data:`termnorm.encoders.runtime.RUNTIME_HELP`), escaped."""

DB_HELP = (
    "The project database: a SQLite file or a SQLAlchemy URL (postgresql://user:pw@host/db). "
    "Default PROJECT.termnorm.db here."
)


def overwrite_option() -> Any:
    """``--overwrite`` (default off)."""
    return typer.Option(
        False,
        "--overwrite",
        help="Replace a non-empty --out (its contents are deleted once the new folder is "
        "written). An --out that is, holds or lies inside an input is refused even so.",
    )


def db_option() -> Any:
    """``--db`` (env ``TERMNORM_PROJECT_DB``)."""
    return typer.Option(None, "--db", envvar="TERMNORM_PROJECT_DB", help=DB_HELP)


def json_option() -> Any:
    """``--json``: print the report as JSON."""
    return typer.Option(False, "--json", help="Print the report as JSON.")
