"""Schema migrations: the Alembic revisions shipped in ``migrations/versions``, applied when a
store opens.

A fresh database is created at the newest revision; an older one is upgraded in one
transaction; a database at a revision this termnorm does not know (written by a newer
termnorm) is refused by name, before anything is touched.
"""

from __future__ import annotations

import termnorm.projects._deps  # noqa: F401  (the projects extra, named when missing)

# isort: split
import functools
from pathlib import Path
from typing import TYPE_CHECKING

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory

from termnorm.errors import SchemaTooNewError

if TYPE_CHECKING:
    from sqlalchemy import Connection, Engine

__all__ = ["MIGRATIONS", "current_revision", "head_revision", "upgrade"]

MIGRATIONS = Path(__file__).resolve().parent / "migrations"


def _config() -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    return config


@functools.cache
def _script() -> ScriptDirectory:
    """The shipped revisions, read once per process."""
    return ScriptDirectory.from_config(_config())


def head_revision() -> str:
    """The newest schema revision this termnorm knows."""
    head = _script().get_current_head()
    if head is None:  # the package ships its revisions
        raise RuntimeError(f"no schema revision in {MIGRATIONS}")
    return head


def current_revision(connection: Connection) -> str | None:
    """The database's schema revision (``None``: no project table yet)."""
    return MigrationContext.configure(connection).get_current_revision()


def upgrade(engine: Engine, shown: str) -> str:
    """Bring the database of ``engine`` (named ``shown`` in errors) to :func:`head_revision`
    (nothing to do when it is there); returns the revision. :class:`SchemaTooNewError` when
    the database names an unknown revision."""
    head = head_revision()
    with engine.connect() as connection:
        current = current_revision(connection)
    if current == head:
        return head
    if current is not None and current not in {r.revision for r in _script().walk_revisions()}:
        raise SchemaTooNewError(
            f"{shown} is at schema revision {current!r}, which this termnorm does not "
            f"know (its newest is {head!r}): the database was written by a newer termnorm; "
            "upgrade termnorm (pip install -U termnorm) to open it"
        )
    config = _config()
    bind = engine.execution_options(termnorm_immediate=True)
    with bind.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "head")
    return head
