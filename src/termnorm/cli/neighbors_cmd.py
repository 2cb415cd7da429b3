"""``termnorm neighbors TERM``: the nearest concepts of a term in one or more indexes, to
compare models by eye (CODER's case studies)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from termnorm.cli._options import threads_option, use_threads
from termnorm.cli._output import print_json

__all__ = ["register"]

NEIGHBORS_HELP = """Print the k nearest concepts of each TERM in an index (score, matched term).

Give --index several times to compare indexes (e.g. built with different models) side by
side. Without --index the default index (HPO + all-MiniLM-L6-v2) is used, built once on
first use.

Examples:

  termnorm neighbors "pufferfish poisoning" -k 5

  termnorm neighbors "heart attack" "MI" --index idx/medic-base --index idx/medic-coder

  termnorm neighbors "dorsalgia" --index idx/medic --mode concept --json
"""


def register(app: typer.Typer) -> None:
    """Attach ``neighbors`` to ``app``."""

    @app.command("neighbors", help=NEIGHBORS_HELP)
    def neighbors(
        terms: list[str] = typer.Argument(..., help="Terms to look up."),
        indexes: list[Path] | None = typer.Option(
            None, "--index", help="Index folder (repeatable; default: the built-in HPO index)."
        ),
        k: int = typer.Option(5, "-k", "--k", min=1, help="Concepts per term."),
        mode: str = typer.Option("term", "--mode", help="term or concept vectors."),
        json_out: bool = typer.Option(False, "--json", help="Print JSON."),
        threads: int | None = threads_option(),
    ) -> None:
        from rich.console import Console
        from rich.table import Table

        from termnorm.api import get_normalizer
        from termnorm.search.candidate import candidates_or_raise

        if mode not in ("term", "concept"):
            raise typer.BadParameter("must be term or concept", param_hint="--mode")
        use_threads(threads)
        payload: list[dict[str, Any]] = []
        targets: list[Path | None] = list(indexes) if indexes else [None]
        for index in targets:
            if index is None:
                typer.echo("using the default index (built once on first use)", err=True)
            results = get_normalizer(index, mode).normalize_rows(terms, k)
            name = str(index) if index is not None else "default"
            for term, found in zip(terms, candidates_or_raise(results, terms), strict=True):
                neighbors = [c.to_dict() for c in found]
                payload.append({"index": name, "query": term, "neighbors": neighbors})
        if json_out:
            print_json(payload)
            return
        console = Console()
        for entry in payload:
            table = Table(title=f"{entry['query']!r} in {entry['index']}")
            for column in ("#", "concept", "name", "score", "matched term"):
                table.add_column(column, justify="right" if column in ("#", "score") else "left")
            for c in entry["neighbors"]:
                table.add_row(
                    str(c["rank"]),
                    c["concept_id"],
                    c["name"],
                    f"{c['score']:.4f}",
                    c["matched_term"],
                )
            console.print(table)
