"""Where projects live: a SQLAlchemy engine over SQLite (default) or PostgreSQL, sessions
that read or write, and database errors turned into :mod:`termnorm.errors`.

``db`` is a SQLAlchemy URL (``postgresql+psycopg://user:pw@host/db``, ``sqlite:///path``) or a
file path (SQLite); ``None`` is ``PROJECT.termnorm.db`` in the working folder. SQLite runs in
WAL mode (a reader never waits for the writer, so a review page keeps answering while
``map run`` writes), with a busy timeout (a second writer waits that long, then gets
:class:`DatabaseBusyError`) and foreign keys on; a writing session takes the write lock at
its start (``BEGIN IMMEDIATE``), so two writers queue instead of deadlocking. Opening a
store applies the schema migrations (:mod:`termnorm.projects.migrate`).
"""

from __future__ import annotations

import termnorm.projects._deps  # noqa: F401  (the projects extra, named when missing)

# isort: split
import logging
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event, select
from sqlalchemy.engine import make_url
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session

from termnorm.errors import (
    DatabaseBusyError,
    DatabaseUnreachableError,
    MissingExtraError,
    ProjectNotFoundError,
)
from termnorm.projects.models import ProjectRow

__all__ = [
    "DEFAULT_BUSY_TIMEOUT",
    "DatabaseLike",
    "Store",
    "check_name",
    "database_url",
    "open_project",
    "open_store",
    "using_store",
]

logger = logging.getLogger(__name__)

DEFAULT_BUSY_TIMEOUT = 30.0
"""Seconds a SQLite writer waits for another one before :class:`DatabaseBusyError`."""
CONNECT_TIMEOUT = 10
"""Seconds to reach a PostgreSQL server before :class:`DatabaseUnreachableError`."""
DB_SUFFIX = ".termnorm.db"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,199}$")


def check_name(project: str) -> str:
    """``project`` when it is a usable name (letters, digits, ``_.-``, at most 200), else a
    :class:`ValueError` saying so."""
    if not _NAME.match(project):
        raise ValueError(
            f"project name {project!r}: use letters, digits, '_', '.', '-' (at most 200, "
            "starting with a letter or digit), e.g. lab-codes-2026"
        )
    return project


def database_url(project: str, db: str | Path | None) -> str:
    """The SQLAlchemy URL of ``db`` (see the module); a bare ``postgresql://`` URL gets the
    psycopg (v3) driver."""
    if db is None:
        return f"sqlite:///{Path(check_name(project) + DB_SUFFIX).resolve()}"
    text = str(db)
    if "://" not in text:
        return f"sqlite:///{Path(text).resolve()}"
    if text.startswith(("postgresql://", "postgres://")):
        return "postgresql+psycopg://" + text.split("://", 1)[1]
    return text


@dataclass
class Store:
    """An open database: ``engine``, the URL shown to users (password hidden) and the busy
    timeout its SQLite writers wait."""

    engine: Engine
    shown: str
    busy_timeout: float

    @contextmanager
    def session(self, write: bool = False) -> Iterator[Session]:
        """A session in one transaction, committed when the block ends (rolled back on
        error). ``write``: SQLite takes the write lock at ``BEGIN`` (see the module).
        Database errors leave as :class:`DatabaseBusyError` /
        :class:`DatabaseUnreachableError`."""
        bind = self.engine.execution_options(termnorm_immediate=write)
        with self.errors(), Session(bind, expire_on_commit=False) as session, session.begin():
            yield session

    @contextmanager
    def errors(self) -> Iterator[None]:
        """Translate a locked or unreachable database into this room's errors."""
        try:
            yield
        except OperationalError as exc:
            raise self._translated(exc) from exc

    def _translated(self, exc: OperationalError) -> Exception:
        text = str(exc.orig) if exc.orig is not None else str(exc)
        sqlite = self.engine.dialect.name == "sqlite"
        if sqlite and "locked" in text:
            return DatabaseBusyError(
                f"{self.shown} stayed locked by another writer for {self.busy_timeout:g} s "
                "(a map run or another reviewer): nothing was written; try again when it "
                "is done, or raise the busy timeout"
            )
        if sqlite and ("unable to open" in text or "readonly" in text):
            return _unwritable(self.engine.url.database or self.shown)
        if sqlite:
            return DatabaseUnreachableError(f"{self.shown}: {text.strip()}")
        return DatabaseUnreachableError(
            f"cannot reach the database {self.shown}: {text.strip().splitlines()[0]} "
            "(is the server running, and are the host, port, user and password right?)"
        )

    def project(self, session: Session, name: str) -> ProjectRow:
        """The project called ``name``; :class:`ProjectNotFoundError` listing the ones there."""
        found = session.scalars(select(ProjectRow).where(ProjectRow.name == name)).first()
        if found is None:
            names = list(session.scalars(select(ProjectRow.name).order_by(ProjectRow.name)))
            there = f"projects there: {', '.join(names)}" if names else "it holds no project"
            raise ProjectNotFoundError(
                f"no project {name!r} in {self.shown} ({there}); create it with "
                f"termnorm map init {name} --source FILE ... (or give --db)"
            )
        return found

    def close(self) -> None:
        """Close every pooled connection."""
        self.engine.dispose()


def _sqlite_events(engine: Engine, busy_timeout: float) -> None:
    """WAL, busy timeout, foreign keys, and ``BEGIN [IMMEDIATE]`` issued by SQLAlchemy (the
    driver's own transaction handling is turned off, as SQLAlchemy's SQLite docs advise)."""

    @event.listens_for(engine, "connect")
    def _connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
        cursor.execute("PRAGMA journal_mode = WAL")
        cursor.execute("PRAGMA synchronous = NORMAL")
        cursor.execute("PRAGMA foreign_keys = ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(connection: Any) -> None:
        immediate = connection.get_execution_options().get("termnorm_immediate", False)
        connection.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")


def _unwritable(path: str) -> DatabaseUnreachableError:
    folder = Path(path).parent
    return DatabaseUnreachableError(
        f"cannot open or create the project database {path}: SQLite needs to write the file "
        f"and its -wal and -shm files beside it in {folder}, which is not writable (or not "
        "there); give --db a file in a folder you may write (or TERMNORM_PROJECT_DB)"
    )


def _sqlite_file(project: str, path: str, create: bool) -> None:
    """Make the folder of a SQLite file that ``create`` may make; else refuse a missing
    file (opening it would leave an empty database behind)."""
    file = Path(path)
    if not create:
        if not file.is_file():
            raise ProjectNotFoundError(
                f"no project database {file} (so no project {project!r}); create the "
                f"project with termnorm map init {project} --source FILE ... (or give --db "
                "the database it is in)"
            )
        return
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _unwritable(path) from exc


def open_store(
    project: str,
    db: str | Path | None = None,
    busy_timeout: float = DEFAULT_BUSY_TIMEOUT,
    create: bool = True,
) -> Store:
    """Open (and migrate) the database of ``project`` (see the module for ``db``).

    A missing SQLite file is created when ``create`` (else
    :class:`~termnorm.errors.ProjectNotFoundError`, and no file is left behind); a
    PostgreSQL database must exist. Raises :class:`DatabaseUnreachableError` (a SQLite file
    in a folder that cannot be written says so), :class:`DatabaseBusyError`, or
    :class:`~termnorm.errors.SchemaTooNewError` for a database of a newer termnorm.
    """
    from termnorm.projects.migrate import upgrade

    url = make_url(database_url(project, db))
    shown = url.render_as_string(hide_password=True)
    if url.get_backend_name() == "sqlite":
        if url.database and url.database != ":memory:":
            _sqlite_file(project, url.database, create)
        engine = create_engine(url, connect_args={"timeout": busy_timeout})
        _sqlite_events(engine, busy_timeout)
    else:
        if url.get_backend_name() == "postgresql":
            try:
                import psycopg  # noqa: F401
            except ImportError as exc:
                raise MissingExtraError("psycopg", "projects") from exc
        engine = create_engine(
            url, pool_pre_ping=True, connect_args={"connect_timeout": CONNECT_TIMEOUT}
        )
    store = Store(engine, shown, busy_timeout)
    try:
        with store.errors():
            upgrade(store.engine, store.shown)
    except BaseException:
        engine.dispose()
        raise
    return store


DatabaseLike = str | Path | Store | None
"""What every project function takes as ``db``: a URL or SQLite path (opened for the call and
closed after it), ``None`` (the default file), or an open :class:`Store` (used as it is and
left open: a long-lived caller — a service, a simulation — keeps one engine, its pool and its
compiled statements)."""


@contextmanager
def using_store(
    project: str,
    db: DatabaseLike = None,
    busy_timeout: float = DEFAULT_BUSY_TIMEOUT,
    create: bool = False,
) -> Iterator[Store]:
    """``db`` as an open store for the block (see :data:`DatabaseLike`); only ``create``
    makes a missing SQLite file (``map init``), else there is no project to find."""
    if isinstance(db, Store):
        yield db
        return
    store = open_store(project, db, busy_timeout, create)
    try:
        yield store
    finally:
        store.close()


@contextmanager
def open_project(
    project: str,
    db: DatabaseLike = None,
    write: bool = False,
    busy_timeout: float = DEFAULT_BUSY_TIMEOUT,
) -> Iterator[tuple[Store, Session, ProjectRow]]:
    """The store, a session in one transaction (see :meth:`Store.session`) and the project
    row of ``project``."""
    with using_store(project, db, busy_timeout) as store, store.session(write) as session:
        yield store, session, store.project(session, project)
