"""``termnorm map reviewer add | list | remove``: the people of a project's review page, each
with a token that names them (registered into the ``map`` group by
:mod:`termnorm.cli.map_cmd`)."""

from __future__ import annotations

import typer

from termnorm.cli._options import db_option, json_option
from termnorm.cli._output import print_json

__all__ = ["register"]

REVIEWER_HELP = """The reviewers of a project's review page (termnorm serve --project PROJECT).

  TOKEN=$(termnorm map reviewer add labs ann)     (the token alone on stdout, shown once)

  then open http://127.0.0.1:8000/review#token=$TOKEN

Only the token's SHA-256 is stored; a reviewer who lost theirs gets a new one with --rotate."""


def register(group: typer.Typer) -> None:
    """Attach ``reviewer`` to the ``map`` group."""
    reviewers = typer.Typer(help=REVIEWER_HELP, no_args_is_help=True)

    @reviewers.command("add")
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

    @reviewers.command("list")
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

    @reviewers.command("remove")
    def remove_cmd(
        project: str = typer.Argument(..., help="Project name."),
        name: str = typer.Argument(..., help="The reviewer to remove."),
        db: str | None = db_option(),
    ) -> None:
        """Remove a reviewer: their token stops working, their decisions stay."""
        from termnorm.projects.reviewers import remove_reviewer

        remove_reviewer(project, name, db=db)
        typer.echo(f"{project}: reviewer {name!r} removed (their decisions stay)")

    group.add_typer(reviewers, name="reviewer")
