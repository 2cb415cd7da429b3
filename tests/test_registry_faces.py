"""One registration line per extension: a dummy KG format and a dummy exporter, registered in
:data:`termnorm.kg.formats.FORMATS` and :data:`termnorm.projects.exports.EXPORTERS`, reach
``termnorm kg build`` / ``termnorm map export`` (their ``--format``, their option flags and
``--help``) and the Python API with no other edit; an unknown name lists the known ones on
every face. (The service has no export endpoint, so exporters have no service face.)
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from _project_crash import build
from _project_fixtures import write_codes
from termnorm.cli import kg_cmd, map_cmd
from termnorm.errors import UnknownNameError
from termnorm.kg import KnowledgeGraph, LoadReport, SourceSpec, build_kg
from termnorm.kg.formats import FORMATS, PathRule
from termnorm.kg.records import Concept, Term
from termnorm.options import opt
from termnorm.projects import PipelineSettings, export, init_project, run_project
from termnorm.projects.exports import EXPORTERS, ExportJob

runner = CliRunner()


@dataclass(frozen=True)
class DummyOptions:
    """The dummy format's one option."""

    its_option: str = opt("fever", "The one term of the dummy's one concept.")


def load_dummy(path: Path | None, report: LoadReport, options: DummyOptions) -> Iterator[Any]:
    """One concept, named by ``its_option``."""
    report.kept.update(concepts=1, terms=1)
    yield Concept("DUMMY:1", options.its_option)
    yield Term("DUMMY:1", options.its_option, is_preferred=True)


def write_dummy(path: Path, job: ExportJob, options: None) -> int:
    """Every live row's code, one a line."""
    rows = job.rows()
    path.write_text("".join(f"{r.code}\n" for r in rows), encoding="utf-8")
    return len(rows)


@pytest.fixture()
def app() -> Iterator[typer.Typer]:
    """A CLI built after the dummies were registered (each with one line)."""
    FORMATS.register("dummy", load_dummy, options=DummyOptions, help="a test's dummy", path=PathRule.OPTIONAL)  # fmt: skip
    EXPORTERS.register("dummy", write_dummy, help="a test's dummy export")
    fresh = typer.Typer()
    kg_cmd.register(fresh)
    map_cmd.register(fresh)
    yield fresh
    FORMATS.unregister("dummy")
    EXPORTERS.unregister("dummy")


def test_a_registered_kg_format_reaches_the_cli_and_the_api(
    app: typer.Typer, tmp_path: Path
) -> None:
    help_text = runner.invoke(app, ["kg", "build", "--help"], terminal_width=200).output
    assert "dummy: a test's dummy" in help_text and "--its-option" in help_text
    out = tmp_path / "kg"
    done = runner.invoke(app, ["kg", "build", "--format", "dummy", "--its-option", "cough", "--out", str(out)])  # fmt: skip
    assert done.exit_code == 0, done.output
    kg = KnowledgeGraph.load(out)
    assert list(kg.terms["term"]) == ["cough"]
    assert kg.card["sources"][0] == {"format": "dummy", "path": "builtin", "options": {"its_option": "cough"}}  # fmt: skip
    api_kg, [report] = build_kg([SourceSpec("dummy", None, {"its_option": "rash"})])
    assert list(api_kg.concepts["name"]) == ["rash"] and report.source == "dummy:builtin"


def test_a_registered_exporter_reaches_the_cli_and_the_api(
    app: typer.Typer, tmp_path: Path
) -> None:
    db = tmp_path / "p.db"
    codes = write_codes(tmp_path / "c.csv", [("A1", "heart attack", "1", ""), ("B2", "x", "1", "")])
    init_project("p", codes, "code", "label", settings=PipelineSettings(k=1), db=db)
    run_project("p", build, db=db, show_progress=False)  # type: ignore[arg-type]
    help_text = runner.invoke(app, ["map", "export", "--help"]).output
    assert "dummy: a test's dummy export" in re.sub(r"[\s│]+", " ", help_text)
    out = tmp_path / "cli.txt"
    done = runner.invoke(app, ["map", "export", "p", "--format", "dummy", "--out", str(out), "--db", str(db)])  # fmt: skip
    assert done.exit_code == 0, done.output
    assert out.read_text(encoding="utf-8") == "A1\nB2\n"
    report = export("p", "dummy", tmp_path / "api.txt", db=db)
    assert (report.format, report.rows) == ("dummy", 2)
    with pytest.raises(ValueError, match="export format 'dummy' takes no options"):
        export("p", "dummy", tmp_path / "no.txt", db=db, base_uri="http://x/")


def test_unknown_names_list_the_known_ones_on_every_face(app: typer.Typer, tmp_path: Path) -> None:
    known_formats = r"unknown KG format 'dumy' \(--format\): did you mean 'dummy'\? Known: umls, .*, dummy"  # fmt: skip
    with pytest.raises(UnknownNameError, match=known_formats):
        SourceSpec("dumy")
    done = runner.invoke(app, ["kg", "build", "--format", "dumy", "--out", str(tmp_path / "k")])
    assert isinstance(done.exception, UnknownNameError)
    assert "Known: umls" in str(done.exception) and "dummy" in str(done.exception)
    known_exports = r"unknown export format 'dumy' \(--format\): did you mean 'dummy'\? Known: sssom, .*, dummy"  # fmt: skip
    with pytest.raises(UnknownNameError, match=known_exports):
        export("p", "dumy", tmp_path / "x.txt", db=tmp_path / "none.db")
    args = ["map", "export", "p", "--format", "dumy", "--out", str(tmp_path / "x")]
    done = runner.invoke(app, [*args, "--db", str(tmp_path / "none.db")])
    assert isinstance(done.exception, UnknownNameError) and "Known: sssom" in str(done.exception)


def test_a_flag_the_chosen_export_format_does_not_take_is_refused(
    app: typer.Typer, tmp_path: Path
) -> None:
    args = ["map", "export", "p", "--format", "csv", "--out", str(tmp_path / "x.csv")]
    done = runner.invoke(app, [*args, "--vocabulary-id", "LAB"])
    assert isinstance(done.exception, ValueError)
    assert str(done.exception) == "--vocabulary-id does not apply to --format csv"
