"""Alembic revisions of the project schema (``versions/``), applied by
:func:`termnorm.projects.migrate.upgrade`. A new revision: change ``models.py``, then from
this folder ``alembic -c alembic.ini revision --autogenerate -m "what changed"`` against a
database at head (see ``env.py``), and review the generated file."""
