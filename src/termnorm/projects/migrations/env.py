"""Alembic's environment: run the revisions on the connection termnorm passes in
(``config.attributes["connection"]``), or on ``sqlalchemy.url`` when a developer runs the
``alembic`` command here to write a new revision."""

from __future__ import annotations

from alembic import context
from sqlalchemy import engine_from_config, pool

from termnorm.projects.models import Base

config = context.config
connection = config.attributes.get("connection")


def _run(conn: object) -> None:
    context.configure(
        connection=conn,  # type: ignore[arg-type]
        target_metadata=Base.metadata,
        render_as_batch=True,  # SQLite alters tables by copying them
        transaction_per_migration=False,
    )
    with context.begin_transaction():
        context.run_migrations()


if connection is not None:
    _run(connection)
else:
    engine = engine_from_config(
        config.get_section(config.config_ini_section, {}),
        prefix="sqlalchemy.",
        poolclass=pool.NullPool,
    )
    with engine.connect() as conn:
        _run(conn)
