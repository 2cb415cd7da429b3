"""The ``projects`` extra (SQLAlchemy, Alembic): imported first by the modules that need it,
so a missing one is a :class:`~termnorm.errors.MissingExtraError` naming the extra."""

from __future__ import annotations

import importlib.util

from termnorm.errors import MissingExtraError

for _package in ("sqlalchemy", "alembic"):
    if importlib.util.find_spec(_package) is None:
        raise MissingExtraError(_package, "projects")
