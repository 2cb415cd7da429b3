"""``termnorm map init``: a new project from a source code list and pipeline settings."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import insert, select
from sqlalchemy.orm import Session

from termnorm.errors import ProjectExistsError
from termnorm.io.decoding import DecodeErrors
from termnorm.projects.models import JsonReady, ProjectRow, SourceRow, utcnow
from termnorm.projects.settings import PipelineSettings, ProjectSource
from termnorm.projects.source import SourceEntry, read_source
from termnorm.projects.states import RowState
from termnorm.projects.store import DEFAULT_BUSY_TIMEOUT, DatabaseLike, check_name, using_store

__all__ = ["InitReport", "init_project", "insert_rows"]

logger = logging.getLogger(__name__)

_INSERT_ROWS = 2000


@dataclass(frozen=True)
class InitReport(JsonReady):
    """What :func:`init_project` stored: the project, its database, rows and source digest."""

    project: str
    db: str
    rows: int
    sha256: str


def insert_rows(session: Session, project_id: int, entries: Iterable[SourceEntry]) -> int:
    """Store ``entries`` as new rows of the project, all ``to_map``; returns how many."""
    now, count, batch = utcnow(), 0, []
    for entry in entries:
        batch.append(
            {
                "project_id": project_id,
                "code": entry.code,
                "text": entry.text,
                "frequency": entry.frequency,
                "context": entry.context,
                "version": 1,
                "state": RowState.TO_MAP.value,
                "retired": False,
                "updated_at": now,
            }
        )
        if len(batch) >= _INSERT_ROWS:
            session.execute(insert(SourceRow), batch)
            count, batch = count + len(batch), []
    if batch:
        session.execute(insert(SourceRow), batch)
        count += len(batch)
    return count


def init_project(
    project: str,
    source: str | Path,
    code_column: str,
    text_column: str,
    frequency_column: str | None = None,
    context_columns: Sequence[str] = (),
    settings: PipelineSettings | None = None,
    *,
    db: DatabaseLike = None,
    encoding: str = "utf-8-sig",
    errors: DecodeErrors | str = DecodeErrors.STRICT,
    busy_timeout: float = DEFAULT_BUSY_TIMEOUT,
) -> InitReport:
    """Create ``project`` in ``db`` with every row of ``source`` to map.

    The source is read and checked whole first (:func:`~termnorm.projects.source.read_source`:
    missing columns, empty codes or texts, duplicate codes are refused naming the rows;
    undecodable bytes too unless ``errors`` is ``replace``, which the project keeps for
    :func:`~termnorm.projects.apply.apply_source`), then
    stored in one transaction: either the whole project exists afterwards or nothing does.
    An existing project of that name is refused (:class:`ProjectExistsError`; a new version
    of its list is :func:`~termnorm.projects.apply.apply_source`)."""
    check_name(project)
    spec, entries = read_source(
        source,
        code_column,
        text_column,
        frequency_column,
        tuple(context_columns),
        encoding,
        errors,
    )
    settings = settings or PipelineSettings()
    with (
        using_store(project, db, busy_timeout, create=True) as store,
        store.session(write=True) as session,
    ):
        _refuse_existing(session, project, spec, store.shown)
        row = ProjectRow(
            name=project, created_at=utcnow(), source=spec.to_dict(), **settings.to_row()
        )
        session.add(row)
        session.flush()
        count = insert_rows(session, row.id, entries)
    logger.info("project %s: %d rows from %s into %s", project, count, spec.path, store.shown)
    return InitReport(project, store.shown, count, spec.sha256)


def _refuse_existing(session: Session, name: str, spec: ProjectSource, shown: str) -> None:
    found = session.scalars(select(ProjectRow).where(ProjectRow.name == name)).first()
    if found is None:
        return
    old = ProjectSource.from_dict(found.source)
    if old.sha256 != spec.sha256:
        raise ProjectExistsError(
            f"project {name!r} exists in {shown}, made from {old.path} (sha256 {old.sha256}); "
            f"this file differs (sha256 {spec.sha256}): to bring in a new version of the "
            f"list run termnorm map apply {name} --source {spec.path}"
        )
    raise ProjectExistsError(
        f"project {name!r} already exists in {shown} with this very file: continue it with "
        f"termnorm map run {name} / map status {name}"
    )
