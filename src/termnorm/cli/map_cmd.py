"""``termnorm map``: mapping projects — a code list mapped, reviewed and exported.

Thin: each command parses its options, calls one function of :mod:`termnorm.projects` (the
matcher of ``map run`` is :func:`termnorm.api.project_matcher`, the assembly ``normalize``
uses) and prints its report (``--json`` for machines).
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import typer

from termnorm.cli._config_options import with_options
from termnorm.cli._options import db_option, encoding_option, json_option, threads_option
from termnorm.cli._output import print_json, print_report
from termnorm.cli._source_flags import flag_values, options_for, source_flag_params, source_flags
from termnorm.cli._strategy import spec_from_options, with_spec_options
from termnorm.cli.map_review_cmd import min_score_option
from termnorm.engines import Engine
from termnorm.io.decoding import DecodeErrors
from termnorm.projects.settings import DEFAULT_K
from termnorm.search.spec import SPEC_HELP

__all__ = ["register"]

MAP_HELP = """Mapping projects: map a code list (a hospital's lab or diagnosis codes, a registry's terms) to a terminology, review the uncertain rows, export SSSOM / OMOP / FHIR ConceptMap / CSV / Usagi.

  termnorm map init labs --source codes.csv --code-column code --text-column name --index idx/loinc

  termnorm map run labs            (resumable: run again after an interruption)

  termnorm map run labs --engine ray --workers 8     (a large list)

  termnorm map status labs

  termnorm map decide labs GLU1 --approve --reviewer ann

  termnorm map export labs --format sssom --out labs.sssom.tsv

  termnorm map import-usagi labs usagi_mapping.csv     (a Usagi mapping moved in)

  termnorm map export labs --format fhir --fhir-version R5 --source-system http://hospital.example/lab-codes --out labs.conceptmap.json

The project lives in PROJECT.termnorm.db (SQLite) unless --db names another file or a PostgreSQL URL (postgresql://user:password@host/db); TERMNORM_PROJECT_DB sets --db for every command."""


MAP_ENGINE_HELP = (
    "local: this process; ray: each batch is searched on --workers Ray actors (each loads the "
    "index once, --batch-rows rows each) and written here in one transaction, so resume stays "
    "exact (needs the ray extra)."
)


INIT_HELP = {
    "strategy": SPEC_HELP["strategy"] + " Approved mappings are domain synonyms, so the default "
    "searches them once there are some.",
    "combiner": SPEC_HELP["combiner"] + " Scores then are calibrated: map status shows the "
    "expected precision of auto-approving.",
}
"""``map init``'s help texts where a project adds to ``normalize``'s."""


def _source_option(help: str) -> Any:
    """``--source FILE``: a code list that exists."""
    return typer.Option(..., "--source", exists=True, dir_okay=False, help=help)


@with_spec_options(help=INIT_HELP)
def init(
    project: str = typer.Argument(..., help="Project name (letters, digits, _ . -)."),
    source: Path = _source_option("The code list: CSV, TSV, JSONL or Parquet."),
    code_column: str = typer.Option(
        ..., "--code-column", help="Column of the source codes (unique)."
    ),
    text_column: str = typer.Option(..., "--text-column", help="Column of the texts to map."),
    frequency_column: str | None = typer.Option(
        None,
        "--frequency-column",
        help="Column of how often each code occurs (orders the review).",
    ),
    context_column: list[str] = typer.Option(
        [],
        "--context-column",
        help="Column shown to reviewers (unit, specimen, ...); repeatable.",
    ),
    k: int = typer.Option(DEFAULT_K, "-k", "--k", min=1, help="Candidates kept per row."),
    encoding: str = encoding_option("Text encoding of a CSV/TSV/JSONL source."),
    errors: DecodeErrors = typer.Option(
        DecodeErrors.STRICT,
        "--errors",
        help="Undecodable bytes in the source: strict stops at their file:line; replace keeps "
        "the row with U+FFFD in their place (map apply reads later lists the same way).",
    ),
    db: str | None = db_option(),
    json_out: bool = json_option(),
    **spec: Any,
) -> None:
    """Create a project from a code list; every row waits for map run. The search options are termnorm normalize's: the project stores them as its pipeline spec."""
    from termnorm.projects.init import init_project
    from termnorm.projects.settings import PipelineSettings

    settings = PipelineSettings(spec_from_options(spec).resolved(), k)
    report = init_project(
        project,
        source,
        code_column,
        text_column,
        frequency_column,
        context_column,
        settings,
        db=db,
        encoding=encoding,
        errors=errors,
    )
    line = f"project {project}: {report.rows} rows in {report.db}; next: termnorm map run {project}"
    print_report(report, json_out, line)


def run(
    project: str = typer.Argument(..., help="Project name."),
    batch_rows: int = typer.Option(
        256, "--batch-rows", min=1, max=10_000, help="Rows searched and committed at a time."
    ),
    remap: bool = typer.Option(
        False,
        "--remap",
        help="Also re-search the rows still to review (decisions made since count as synonyms).",
    ),
    ignore_source_change: bool = typer.Option(
        False,
        "--ignore-source-change",
        help="Run even though the source file changed since it was read.",
    ),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Show a progress bar."),
    engine: Engine = typer.Option(Engine.LOCAL, "--engine", help=MAP_ENGINE_HELP),
    workers: int = typer.Option(1, "--workers", min=1, help="Ray actors (--engine ray)."),
    ray_address: str | None = typer.Option(
        None,
        "--address",
        "--ray-address",
        help="A running Ray cluster (e.g. ray://head:10001 or auto) instead of a local Ray; "
        "every node must see the index at the same path.",
    ),
    threads: int | None = threads_option(),
    db: str | None = db_option(),
    json_out: bool = json_option(),
) -> None:
    """Map every row still to map (resumable: an interrupted run leaves each row done or to do). --threads holds for this run only; the project keeps the threads map init stored."""
    from termnorm.api import project_matcher
    from termnorm.projects.run import run_project

    report = run_project(
        project,
        project_matcher,
        db=db,
        batch_rows=batch_rows,
        remap=remap,
        show_progress=progress,
        check_source=not ignore_source_change,
        engine=engine,
        workers=workers,
        address=ray_address,
        threads=threads,
    )
    line = (
        f"{project}: {report.mapped} rows mapped, {report.remapped} re-mapped ({report.errors} "
        f"without candidates; {report.synonyms} learned synonyms searched), {report.left} left"
    )
    print_report(report, json_out, line)


def status_cmd(
    project: str = typer.Argument(..., help="Project name."),
    min_score: float = min_score_option(0.9, "The auto-approve threshold to estimate."),
    db: str | None = db_option(),
    json_out: bool = json_option(),
) -> None:
    """Rows by state, decisions, and what auto-approving at --min-score would give."""
    from termnorm.projects.overview import status

    report = status(project, db=db, min_score=min_score)
    if json_out:
        print_json(report.to_dict())
        return
    typer.echo(f"project {project} ({report.db}): {report.rows} rows, {report.retired} retired")
    typer.echo("  " + "  ".join(f"{s} {n}" for s, n in report.states.items()))
    who = ", ".join(report.reviewers) or "nobody yet"
    typer.echo(f"  {report.decisions} decisions by {who}; {report.synonyms} learned synonyms")
    auto = report.auto
    if auto is not None:
        expected = (
            f"expected precision {auto.expected_precision:.3f}"
            if auto.expected_precision is not None
            else "expected precision unknown (scores are similarities; a --combiner makes them probabilities)"
            if not auto.calibrated
            else "expected precision -"
        )
        observed = (
            f"observed {auto.observed_precision:.3f} on {auto.reviewed} reviewed rows"
            if auto.observed_precision is not None
            else "no reviewed row scored that high yet"
        )
        typer.echo(
            f"  score >= {auto.min_score:g}: {auto.rows} rows could be auto-approved; {expected}; {observed}"
        )
    if report.source_changed:
        typer.echo(f"warning: {report.source_changed}", err=True)


def _export_command() -> Any:
    """``map export``: its ``--format`` takes any name in
    :data:`~termnorm.projects.exports.EXPORTERS`, its other flags come from the exporters'
    options (a flag the chosen format does not take is an error)."""
    from termnorm.projects.exports import EXPORTERS

    flags = source_flags(EXPORTERS)
    formats = "; ".join(f"{e.name}: {e.help}" if e.help else e.name for e in EXPORTERS)

    def export_cmd(
        project: str = typer.Argument(..., help="Project name."),
        format: str = typer.Option(..., "--format", help=f"The export format: {formats}."),
        out: Path = typer.Option(..., "--out", help="File to write."),
        db: str | None = db_option(),
        json_out: bool = json_option(),
        **given: Any,
    ) -> None:
        """Write the project's mappings as SSSOM TSV, OMOP source_to_concept_map, a FHIR ConceptMap, CSV, synonyms or Usagi CSV."""
        from termnorm.projects.exports import export

        options = options_for(format, flag_values(flags, given)) if format in EXPORTERS else {}
        report = export(project, format, out, db=db, **options)
        print_report(report, json_out, f"{report.rows} rows written to {out} ({report.format})")

    own = [
        p for p in inspect.signature(export_cmd).parameters.values() if p.kind is not p.VAR_KEYWORD
    ]
    return with_options(export_cmd, own, source_flag_params(flags))


def apply_cmd(
    project: str = typer.Argument(..., help="Project name."),
    source: Path = _source_option("The new version of the code list (same columns)."),
    db: str | None = db_option(),
    json_out: bool = json_option(),
) -> None:
    """Bring in a new version of the list: unchanged rows keep their decisions, changed and new rows go to map, dropped rows are retired."""
    from termnorm.projects.apply import apply_source

    report = apply_source(project, source, db=db)
    line = (
        f"{project}: {report.unchanged} unchanged, {report.changed} changed and "
        f"{report.added} new (to map), {report.retired} retired, {report.restored} restored"
    )
    print_report(report, json_out, line)


def register(app: typer.Typer) -> None:
    """Attach the ``map`` group to ``app`` (the review commands: :mod:`map_review_cmd`)."""
    group = typer.Typer(help=MAP_HELP, no_args_is_help=True)
    group.command("init")(init)
    group.command("run")(run)
    group.command("status")(status_cmd)
    group.command("export")(_export_command())
    group.command("apply")(apply_cmd)
    from termnorm.cli import map_review_cmd

    map_review_cmd.register(group)
    from termnorm.cli import map_usagi_cmd

    map_usagi_cmd.register(group)
    app.add_typer(group, name="map")
