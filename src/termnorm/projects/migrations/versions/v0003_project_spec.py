"""A project stores its pipeline spec: the search settings move from ``project.settings``
into a new ``project.spec`` column (read as a ``PipelineSpec``: same field names, defaults
for the rest); ``settings`` keeps the project's own (``k``). The column gets a server
default (SQLite adds a NOT NULL column only with one). A downgrade puts the nine old
fields back: spec fields the old settings lacked are lost.

Revision ID: 0003_project_spec
Revises: 0002_reviewers
Create Date: 2026-12-01
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0003_project_spec"
down_revision = "0002_reviewers"
branch_labels = None
depends_on = None

SEARCH = "index runtime synonyms strategy ranker hybrid combiner k_c min_score".split()  # noqa: SIM905
"""The old settings that decide the search: the spec's fields of the same names."""
_PROJECT = sa.table(
    "project", sa.column("id"), sa.column("settings", sa.JSON), sa.column("spec", sa.JSON)
)


def _move(into_spec: bool) -> None:
    """Each project's search settings from ``settings`` to ``spec`` (or back)."""
    bind = op.get_bind()
    for row_id, settings, spec in bind.execute(sa.select(*_PROJECT.c)).all():
        old: dict[str, Any] = settings if into_spec else spec
        search = {key: old[key] for key in SEARCH if key in old}
        k = {"k": settings.get("k", 5)}
        new = {"settings": k, "spec": search} if into_spec else {"settings": {**search, **k}}
        bind.execute(_PROJECT.update().where(_PROJECT.c.id == row_id).values(**new))


def upgrade() -> None:
    """Add ``project.spec`` and move each project's search settings into it."""
    spec = sa.Column("spec", sa.JSON(), nullable=False, server_default=sa.text("'{}'"))
    op.add_column("project", spec)
    _move(into_spec=True)


def downgrade() -> None:
    """Put the search settings back into ``project.settings``; drop ``project.spec``."""
    _move(into_spec=False)
    op.drop_column("project", "spec")
