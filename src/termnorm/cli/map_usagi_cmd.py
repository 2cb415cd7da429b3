"""``termnorm map import-usagi``: an OHDSI Usagi mapping CSV moved into a project
(registered into the ``map`` group by :mod:`termnorm.cli.map_cmd`; the way back is
``termnorm map export --format usagi``)."""

from __future__ import annotations

from pathlib import Path

import typer

from termnorm.cli._options import db_option, json_option
from termnorm.cli._output import print_report

__all__ = ["register"]


def import_usagi_cmd(
    project: str = typer.Argument(..., help="Project name (map init it from the code list first)."),
    file: Path = typer.Argument(..., exists=True, dir_okay=False, help="Usagi mapping CSV."),
    default_reviewer: str | None = typer.Option(
        None,
        "--default-reviewer",
        help="Reviewer named by decisions whose statusSetBy is empty (older Usagi files).",
    ),
    db: str | None = db_option(),
    json_out: bool = json_option(),
) -> None:
    """Load a Usagi mapping CSV into a project: APPROVED rows become approved decisions of their statusSetBy (time kept), conceptId 0 no match, FLAGGED a flag, UNCHECKED rows stay pending with Usagi's suggestion as their candidate. Every sourceCode must be a row of the project; one refused line writes nothing."""
    from termnorm.projects.usagi_import import import_usagi

    report = import_usagi(project, file, db=db, default_reviewer=default_reviewer)
    line = (
        f"{project}: {report.codes} codes from {file}: {report.approved} approved, "
        f"{report.auto_approved} auto-approved, {report.no_match} no match, {report.flagged} "
        f"flagged, {report.suggested} suggestions to review, {report.unchanged} unchanged"
    )
    print_report(report, json_out, line)


def register(group: typer.Typer) -> None:
    """Attach ``import-usagi`` to the ``map`` group."""
    group.command("import-usagi")(import_usagi_cmd)
