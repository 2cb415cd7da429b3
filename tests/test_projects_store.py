"""The project store: migrations on a fresh database, an older database's project settings
upgraded to a pipeline spec (and back), the models equal to the newest revision, a newer revision refused by name, a locked SQLite file and an unreachable
PostgreSQL as clear errors."""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime, timezone
from pathlib import Path

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import create_engine, inspect, select, text

from _project_fixtures import postgres_url, project_db, write_codes  # noqa: F401
from termnorm.encoders.runtime import Runtime
from termnorm.errors import (
    DatabaseBusyError,
    DatabaseUnreachableError,
    ProjectNotFoundError,
    SchemaTooNewError,
)
from termnorm.projects import PipelineSettings, decide, init_project, status
from termnorm.projects.migrate import _config, current_revision, head_revision
from termnorm.projects.models import Base, ProjectRow
from termnorm.projects.store import check_name, database_url, open_store
from termnorm.search.spec import PipelineSpec

TABLES = {"project", "source_row", "candidate", "decision", "lease", "reviewer", "alembic_version"}


def test_a_fresh_database_is_migrated_to_the_newest_revision(project_db: str) -> None:  # noqa: F811  (the fixture)
    store = open_store("p", project_db)
    try:
        assert set(inspect(store.engine).get_table_names()) >= TABLES
        with store.engine.connect() as conn:
            assert current_revision(conn) == head_revision()
            assert compare_metadata(MigrationContext.configure(conn), Base.metadata) == []
    finally:
        store.close()
    open_store("p", project_db).close()  # opening again is a no-op


def test_a_database_of_a_newer_termnorm_is_refused_by_name(project_db: str) -> None:  # noqa: F811  (the fixture)
    store = open_store("p", project_db)
    with store.engine.begin() as conn:
        conn.execute(text("UPDATE alembic_version SET version_num = '0099_from_the_future'"))
    store.close()
    with pytest.raises(SchemaTooNewError, match=r"'0099_from_the_future'.*upgrade termnorm"):
        open_store("p", project_db)


def test_a_locked_sqlite_file_is_a_clear_error_after_the_busy_timeout(tmp_path: Path) -> None:
    path = tmp_path / "p.db"
    init_project("p", write_codes(tmp_path / "codes.csv"), "code", "label", db=path)
    blocker = sqlite3.connect(path, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")  # another writer holds the lock
    try:
        with pytest.raises(DatabaseBusyError, match=r"locked by another writer for 0.2 s"):
            decide("p", "L001", "no_match", reviewer="ann", db=path, busy_timeout=0.2)
        assert status("p", db=path).decisions == 0  # readers still read (WAL)
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    assert decide("p", "L001", "no_match", reviewer="ann", db=path).state == "no_match"


def test_an_unreachable_postgresql_is_a_clear_error_without_the_password() -> None:
    pytest.importorskip("psycopg")
    url = "postgresql://ann:s3cret@127.0.0.1:1/projects"
    with pytest.raises(
        DatabaseUnreachableError, match=r"cannot reach the database .*127\.0\.0\.1:1"
    ) as err:
        open_store("p", url)
    assert "s3cret" not in str(err.value)


def test_a_missing_project_lists_the_ones_there(tmp_path: Path) -> None:
    path = tmp_path / "p.db"
    init_project("labs", write_codes(tmp_path / "codes.csv"), "code", "label", db=path)
    with pytest.raises(ProjectNotFoundError, match=r"no project 'lab'.*projects there: labs"):
        status("lab", db=path)


def test_names_and_urls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert database_url("labs", None) == f"sqlite:///{tmp_path / 'labs.termnorm.db'}"
    assert database_url("x", "postgresql://u@h/d") == "postgresql+psycopg://u@h/d"
    assert database_url("x", "a/b.db") == f"sqlite:///{tmp_path / 'a' / 'b.db'}"
    with pytest.raises(ValueError, match="project name"):
        check_name("../etc")


def test_an_open_store_may_be_passed_and_stays_open(tmp_path: Path) -> None:
    store = open_store("p", tmp_path / "p.db")
    try:
        init_project("p", write_codes(tmp_path / "codes.csv"), "code", "label", db=store)
        decide("p", "L001", "no_match", reviewer="ann", db=store)
        assert status("p", db=store).decisions == 1  # the same engine, still open
    finally:
        store.close()


# the settings a project stored before it stored a spec (schema 0002_reviewers)
OLD_SETTINGS = {
    "index": "/data/idx/loinc",
    "runtime": "onnx",
    "synonyms": ["/data/lab.tsv"],
    "strategy": "d-t",
    "ranker": None,
    "hybrid": None,
    "combiner": "/data/comb",
    "k": 3,
    "k_c": 7,
    "min_score": 0.4,
}


def _old_database(url: str) -> None:
    """A database at schema 0002_reviewers holding one project with :data:`OLD_SETTINGS`."""
    engine = create_engine(url)
    config = _config()
    with engine.begin() as conn:
        config.attributes["connection"] = conn
        command.upgrade(config, "0002_reviewers")
        conn.execute(
            text(
                "INSERT INTO project (id, name, created_at, settings, source) "
                "VALUES (1, 'p', :now, :settings, :source)"
            ),
            {
                "now": datetime.now(timezone.utc),
                "settings": json.dumps(OLD_SETTINGS),
                "source": json.dumps(
                    {
                        "path": "/data/c.csv",
                        "sha256": "0" * 64,
                        "code_column": "code",
                        "text_column": "label",
                    }
                ),
            },
        )
    engine.dispose()


def test_an_older_database_upgrades_its_projects_settings_to_a_spec(project_db: str) -> None:  # noqa: F811  (the fixture)
    url = database_url("p", project_db)
    _old_database(url)
    store = open_store("p", project_db)  # upgraded on opening
    try:
        with store.session() as s:
            row = s.scalars(select(ProjectRow)).one()
            settings = PipelineSettings.from_row(row)
    finally:
        store.close()
    meant = PipelineSpec(
        index=Path("/data/idx/loinc"),
        runtime=Runtime.ONNX,
        synonyms=(Path("/data/lab.tsv"),),
        strategy="d-t",
        combiner=Path("/data/comb"),
        k_c=7,
        min_score=0.4,
    )
    assert settings == PipelineSettings(meant, k=3) and settings.calibrated
    assert row.settings == {"k": 3}
    engine = create_engine(url)  # and back: the old settings as they were
    config = _config()
    with engine.begin() as conn:
        config.attributes["connection"] = conn
        command.downgrade(config, "0002_reviewers")
        stored = conn.execute(text("SELECT settings FROM project")).scalar()
    engine.dispose()
    assert (json.loads(stored) if isinstance(stored, str) else stored) == OLD_SETTINGS
