"""The options every ``termnorm map`` command shares: ``--db`` and ``--json``."""

from __future__ import annotations

from typing import Any

import typer

__all__ = ["DB_HELP", "JSON_HELP", "db_option", "json_option"]

DB_HELP = (
    "The project database: a SQLite file or a SQLAlchemy URL (postgresql://user:pw@host/db). "
    "Default PROJECT.termnorm.db here."
)
JSON_HELP = "Print the report as JSON."


def db_option() -> Any:
    """``--db`` (env ``TERMNORM_PROJECT_DB``)."""
    return typer.Option(None, "--db", envvar="TERMNORM_PROJECT_DB", help=DB_HELP)


def json_option() -> Any:
    """``--json``."""
    return typer.Option(False, "--json", help=JSON_HELP)
