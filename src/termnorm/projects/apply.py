"""``termnorm map apply``: bring a new version of a project's source list in.

Rows are matched by code. Unchanged (same code, same text): kept with their candidates,
decisions and version (their frequency and context take the new values). Changed text:
the row gets the new text and a new version, loses its candidates and goes back to
``to_map`` (its old decisions stay in the audit trail; its current decision is cleared, so
a stale approval is never exported). New codes: new rows to map. Codes the new list lacks:
retired (kept, never exported, never searched; a later list that has them again with the
same text brings them back as they were). Nothing is deleted. The new file is checked whole
first and applied in one transaction.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import delete, select, update

from termnorm.projects.init import insert_rows
from termnorm.projects.models import CandidateRow, JsonReady, SourceRow, utcnow
from termnorm.projects.settings import ProjectSource
from termnorm.projects.source import read_source
from termnorm.projects.states import RowState
from termnorm.projects.store import DEFAULT_BUSY_TIMEOUT, DatabaseLike, open_project

__all__ = ["ApplyReport", "apply_source"]

logger = logging.getLogger(__name__)

_IDS_PER_UPDATE = 500


@dataclass(frozen=True)
class ApplyReport(JsonReady):
    """Rows of the new list ``unchanged``, ``changed`` (back to map), ``added``; rows
    ``retired`` now and ``restored`` (retired before, back with the same text)."""

    project: str
    unchanged: int
    changed: int
    added: int
    retired: int
    restored: int
    sha256: str


def apply_source(
    project: str,
    source: str | Path,
    *,
    db: DatabaseLike = None,
    busy_timeout: float = DEFAULT_BUSY_TIMEOUT,
) -> ApplyReport:
    """Apply the list ``source`` (same columns as the project's first one) to ``project``
    (see the module); the project then records ``source`` and its digest."""
    with open_project(project, db, write=True, busy_timeout=busy_timeout) as (_, session, proj):
        old = ProjectSource.from_dict(proj.source)
        spec, entries = read_source(
            source,
            old.code_column,
            old.text_column,
            old.frequency_column,
            old.context_columns,
            old.encoding,
            old.errors,
        )
        rows = {
            r.code: r
            for r in session.scalars(select(SourceRow).where(SourceRow.project_id == proj.id))
        }
        now = utcnow()
        unchanged = changed = restored = 0
        new = []
        for entry in entries:
            row = rows.pop(entry.code, None)
            if row is None:
                new.append(entry)
                continue
            row.frequency, row.context = entry.frequency, entry.context
            if row.text == entry.text:
                unchanged += 1
                if row.retired:
                    row.retired, row.version, row.updated_at = False, row.version + 1, now
                    restored += 1
                continue
            changed += 1
            session.execute(delete(CandidateRow).where(CandidateRow.row_id == row.id))
            row.text, row.version, row.state = entry.text, row.version + 1, RowState.TO_MAP.value
            row.decision_id, row.map_error, row.retired, row.updated_at = None, None, False, now
        gone = [r.id for r in rows.values() if not r.retired]
        for start in range(0, len(gone), _IDS_PER_UPDATE):
            session.execute(
                update(SourceRow)
                .where(SourceRow.id.in_(gone[start : start + _IDS_PER_UPDATE]))
                .values(retired=True, version=SourceRow.version + 1, updated_at=now)
                .execution_options(synchronize_session=False)
            )
        added = insert_rows(session, proj.id, new)
        proj.source = spec.to_dict()
    report = ApplyReport(project, unchanged, changed, added, len(gone), restored, spec.sha256)
    logger.info("%s: applied %s: %s", project, spec.path, report.to_dict())
    return report
