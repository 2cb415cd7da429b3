"""``termnorm map queue | show | decide | auto-approve`` and ``termnorm map reviewer add | list |
remove``: the review side of a mapping project and the people of its review page, each with a
token that names them (registered into the ``map`` group by :mod:`termnorm.cli.map_cmd`)."""

from __future__ import annotations

from typing import Any

import typer

from termnorm.cli._options import db_option, json_option
from termnorm.cli._output import print_json, print_report
from termnorm.projects.settings import score_bounds
from termnorm.projects.states import Predicate

__all__ = ["CELL_CHARS", "min_score_option", "register", "shown_cell"]

CELL_CHARS = 80
"""The longest cell ``map queue`` prints (``--json`` gives every cell whole)."""

REVIEWER_HELP = """The reviewers of a project's review page (termnorm serve --project PROJECT).

  TOKEN=$(termnorm map reviewer add labs ann)     (the token alone on stdout, shown once)

  then open http://127.0.0.1:8000/review#token=$TOKEN

Only the token's SHA-256 is stored; a reviewer who lost theirs gets a new one with --rotate."""


def min_score_option(default: Any, help: str) -> Any:
    """``--min-score`` bounded as ``termnorm normalize --min-score`` is (the spec's range)."""
    low, high = score_bounds()
    return typer.Option(default, "--min-score", min=low, max=high, help=help)


def shown_cell(value: str, limit: int = CELL_CHARS) -> str:
    """``value`` on one line (tabs and line breaks as spaces), cut to ``limit`` characters
    with an ellipsis: a table cell."""
    flat = " ".join(value.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def queue_cmd(
    project: str = typer.Argument(..., help="Project name."),
    limit: int = typer.Option(20, "--limit", min=1, help="Rows to list."),
    flagged: bool = typer.Option(
        False, "--flagged", help="The rows flagged for a second opinion instead."
    ),
    db: str | None = db_option(),
    json_out: bool = json_option(),
) -> None:
    """The rows to review next: frequency x uncertainty, highest first (long cells cut: --json
    gives them whole)."""
    from termnorm.projects.rows import review_queue
    from termnorm.projects.states import RowState

    states = (RowState.FLAGGED,) if flagged else (RowState.TO_REVIEW,)
    entries = review_queue(project, limit=limit, states=states, db=db)
    if json_out:
        print_json({"rows": [e.to_dict() for e in entries]})
        return
    for e in entries:
        score = "-" if e.score is None else f"{e.score:.3f}"
        typer.echo(
            f"{shown_cell(e.code)}\t{shown_cell(e.text)}\t{e.concept_id or '-'}\t{score}\t"
            f"v{e.version}\tpriority {e.priority:.3g}"
        )


def show_cmd(
    project: str = typer.Argument(..., help="Project name."),
    code: str = typer.Argument(..., help="The row's source code."),
    db: str | None = db_option(),
    json_out: bool = json_option(),
) -> None:
    """One row: its version, candidates and decision history."""
    from termnorm.projects.rows import show_row

    row = show_row(project, code, db=db)
    if json_out:
        print_json(row.to_dict())
        return
    retired = ", retired" if row.retired else ""
    typer.echo(f"{row.code}  {row.text!r}  ({row.state}, version {row.version}{retired})")
    for c in row.candidates:
        typer.echo(
            f"  {c['rank']}. {c['concept_id']}  {c['name']}  {c['score']:.3f}  (via {c['matched_text']!r}, {c['source']})"
        )
    for d in row.decisions:
        concept = f" {d['concept_id']}" if d["concept_id"] else ""
        note = f"  {d['comment']!r}" if d["comment"] else ""
        typer.echo(f"  [{d['created_at'][:19]}] {d['reviewer']}: {d['action']}{concept}{note}")


def decide_cmd(
    project: str = typer.Argument(..., help="Project name."),
    code: str = typer.Argument(..., help="The row's source code."),
    approve: bool = typer.Option(False, "--approve", help="Approve the top candidate."),
    pick: str | None = typer.Option(None, "--pick", help="Map to this concept ID instead."),
    no_match: bool = typer.Option(False, "--no-match", help="No concept fits."),
    flag: bool = typer.Option(False, "--flag", help="Ask for a second opinion."),
    predicate: Predicate | None = typer.Option(
        None, "--predicate", help="exact (default), broad or narrow."
    ),
    comment: str | None = typer.Option(None, "--comment", help="A note (alone: a comment only)."),
    reviewer: str = typer.Option(
        ..., "--reviewer", envvar="TERMNORM_REVIEWER", help="Who decides."
    ),
    expect_version: int | None = typer.Option(
        None,
        "--expect-version",
        help="The row version you looked at: refused if the row changed since.",
    ),
    db: str | None = db_option(),
    json_out: bool = json_option(),
) -> None:
    """Record a review decision (appended to the audit trail)."""
    from termnorm.projects.decisions import decide
    from termnorm.projects.states import Action

    chosen = [
        a
        for a, on in (
            (Action.APPROVE, approve),
            (Action.PICK, pick is not None),
            (Action.NO_MATCH, no_match),
            (Action.FLAG, flag),
        )
        if on
    ]
    if len(chosen) > 1 or (not chosen and comment is None):
        raise typer.BadParameter(
            "give one of --approve, --pick ID, --no-match, --flag (or only --comment)"
        )
    action = chosen[0] if chosen else Action.COMMENT
    record = decide(
        project,
        code,
        action,
        reviewer=reviewer,
        concept_id=pick,
        predicate=predicate,
        comment=comment,
        expect_version=expect_version,
        db=db,
    )
    concept = f" {record.concept_id}" if record.concept_id else ""
    line = f"{code}: {record.action}{concept} by {reviewer} (now {record.state}, version {record.version})"
    print_report(record, json_out, line)


def auto_cmd(
    project: str = typer.Argument(..., help="Project name."),
    min_score: float = min_score_option(..., "Approve top candidates scoring at least this."),
    reviewer: str = typer.Option(
        ..., "--reviewer", envvar="TERMNORM_REVIEWER", help="Who sets the threshold."
    ),
    db: str | None = db_option(),
    json_out: bool = json_option(),
) -> None:
    """Approve every row to review whose top candidate scores at least --min-score."""
    from termnorm.projects.decisions import auto_approve

    report = auto_approve(project, min_score, reviewer=reviewer, db=db)
    precision = report.expected_precision
    expected = f"; expected precision {precision:.3f}" if precision is not None else ""
    line = f"{project}: {report.approved} rows auto-approved at {min_score:g}{expected}"
    print_report(report, json_out, line)


def add_cmd(
    project: str = typer.Argument(..., help="Project name."),
    name: str = typer.Argument(..., help="The reviewer's name (their decisions carry it)."),
    rotate: bool = typer.Option(
        False, "--rotate", help="Give an existing reviewer a new token (the old one stops)."
    ),
    db: str | None = db_option(),
    json_out: bool = json_option(),
) -> None:
    """Add a reviewer and print their token (stdout; shown only now)."""
    from termnorm.projects.reviewers import add_reviewer

    added = add_reviewer(project, name, rotate=rotate, db=db)
    if json_out:
        print_json(added.to_dict())
        return
    typer.echo(added.token)
    typer.echo(
        f"{project}: reviewer {added.name!r} {'has a new token' if rotate else 'added'}. "
        "The token above is shown only now: hand it to them. With termnorm serve "
        f"--project {project} running, they open /review#token=TOKEN.",
        err=True,
    )


def list_cmd(
    project: str = typer.Argument(..., help="Project name."),
    db: str | None = db_option(),
    json_out: bool = json_option(),
) -> None:
    """The reviewers of a project (never their tokens)."""
    from termnorm.projects.reviewers import list_reviewers

    found = list_reviewers(project, db=db)
    if json_out:
        print_json({"reviewers": [r.to_dict() for r in found]})
        return
    for r in found:
        typer.echo(f"{r.name}\ttoken made {r.created_at:%Y-%m-%d %H:%M}")


def remove_cmd(
    project: str = typer.Argument(..., help="Project name."),
    name: str = typer.Argument(..., help="The reviewer to remove."),
    db: str | None = db_option(),
) -> None:
    """Remove a reviewer: their token stops working, their decisions stay."""
    from termnorm.projects.reviewers import remove_reviewer

    remove_reviewer(project, name, db=db)
    typer.echo(f"{project}: reviewer {name!r} removed (their decisions stay)")


def register(group: typer.Typer) -> None:
    """Attach the review commands and ``reviewer`` to the ``map`` group."""
    group.command("queue")(queue_cmd)
    group.command("show")(show_cmd)
    group.command("decide")(decide_cmd)
    group.command("auto-approve")(auto_cmd)
    reviewers = typer.Typer(help=REVIEWER_HELP, no_args_is_help=True)
    reviewers.command("add")(add_cmd)
    reviewers.command("list")(list_cmd)
    reviewers.command("remove")(remove_cmd)
    group.add_typer(reviewers, name="reviewer")
