"""Shared helpers of the mapping-project tests: a code list over the tiny KG, the tiny index
(built once per module), and the project database on SQLite or PostgreSQL.

PostgreSQL: ``TERMNORM_TEST_POSTGRES_URL`` names a server and a role that may create
databases (``.ci/run`` starts Debian's PostgreSQL and sets it); each test gets a database
of its own, dropped afterwards. Without it the PostgreSQL cases skip, saying why.
"""

from __future__ import annotations

import csv
import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import make_tiny_kg
from termnorm import api

POSTGRES_ENV = "TERMNORM_TEST_POSTGRES_URL"

# code, text, frequency, unit: texts that are tiny-KG terms (exact matches, score 1) and
# texts that are not
CODES = [
    ("L001", "heart attack", "120", "n/a"),
    ("L002", "high blood pressure", "300", "mmHg"),
    ("L003", "sugar diabetes", "80", ""),
    ("L004", "bronchial asthma", "40", ""),
    ("L005", "zzqx blorp", "5", ""),
    ("L006", "lung infection", "60", ""),
    ("L007", "thyroid removal", "2", ""),
]


def write_codes(
    path: Path, rows: list[tuple[str, str, str, str]] = CODES, context: str = "unit"
) -> Path:
    """``rows`` as a CSV with columns code, label, count and ``context`` (unit)."""
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["code", "label", "count", context])
        writer.writerows(rows)
    return path


# a queue whose order is known: the fake matcher's top score is 1.0, fake_mapped lowers three
QUEUE_ROWS = [
    ("R1", "a", "10", ""),
    ("R2", "b", "1", ""),
    ("R3", "c", "", ""),
    ("R4", "d", "100", ""),
]
QUEUE_TOP_SCORES = {"R1": 0.5, "R2": 0.2, "R3": 0.9}
"""Priorities (frequency × (1 − top score)): R1 5, R2 0.8, R3 0.1 (no frequency: 1), R4 0."""


def fake_mapped(root: Path, db: str | Path, project: str = "p") -> str | Path:
    """:data:`QUEUE_ROWS` as ``project`` in ``db``, mapped by the fake matcher of
    ``_project_crash`` (five candidates a row), with :data:`QUEUE_TOP_SCORES`; ``db``."""
    from sqlalchemy import select, update

    from _project_crash import build
    from termnorm.projects import init_project, run_project
    from termnorm.projects.models import CandidateRow, SourceRow
    from termnorm.projects.store import open_store

    init_project(
        project, write_codes(root / "queue.csv", QUEUE_ROWS), "code", "label", "count", db=db
    )
    run_project(project, build, db=db, show_progress=False)  # type: ignore[arg-type]
    store = open_store(project, db)
    try:
        with store.session(write=True) as s:
            for code, score in QUEUE_TOP_SCORES.items():
                row_id = s.scalars(select(SourceRow.id).where(SourceRow.code == code)).one()
                s.execute(
                    update(CandidateRow)
                    .where(CandidateRow.row_id == row_id, CandidateRow.rank == 1)
                    .values(score=score)
                )
    finally:
        store.close()
    return db


def build_index(root: Path, model: Path) -> Path:
    """The tiny KG indexed with ``model`` in ``root/idx``."""
    kg = make_tiny_kg().save(root / "kg", card={"sources": [{"format": "fixture"}]})
    api.build_index(kg, model=model, out=root / "idx", show_progress=False)
    return root / "idx"


def postgres_admin_url() -> str:
    """The server URL from the environment, or a skip that says how to get one."""
    url = os.environ.get(POSTGRES_ENV)
    if not url:
        pytest.skip(f"no PostgreSQL: set {POSTGRES_ENV} (.ci/run starts one) to run this case")
    return url


@pytest.fixture()
def postgres_url() -> Iterator[str]:
    """A fresh PostgreSQL database (dropped after the test)."""
    import sqlalchemy as sa

    admin = sa.engine.make_url(postgres_admin_url())
    if admin.drivername in {"postgresql", "postgres"}:
        admin = admin.set(drivername="postgresql+psycopg")
    name = f"termnorm_t_{uuid.uuid4().hex[:12]}"
    engine = sa.create_engine(admin, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as conn:
            conn.exec_driver_sql(f"CREATE DATABASE {name}")
    except sa.exc.OperationalError as exc:
        engine.dispose()
        pytest.skip(f"PostgreSQL at {POSTGRES_ENV} is not reachable: {exc.orig}")
    try:
        yield admin.set(database=name).render_as_string(hide_password=False)
    finally:
        with engine.connect() as conn:
            conn.exec_driver_sql(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        engine.dispose()


@pytest.fixture(params=["sqlite", "postgresql"])
def project_db(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The project database: a SQLite file, or a fresh PostgreSQL database."""
    if request.param == "sqlite":
        return str(tmp_path / "projects.db")
    return str(request.getfixturevalue("postgres_url"))
