"""``termnorm lookup ID``: a concept of an index by its ID (name, types, terms, neighbours),
and the warning ``normalize`` gives when a query is such an ID rather than a term."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from termnorm.cli._output import print_json

if TYPE_CHECKING:  # pragma: no cover
    from termnorm.index import TermIndex
    from termnorm.index.lookup import ConceptInfo

__all__ = ["concept_id_queries", "register", "warn_concept_id_queries"]

LOOKUP_HELP = """Print the concepts with these IDs: name, semantic types, alternative IDs, the vocabulary's attributes (OMOP: vocabulary, code, domain, class), every term with its source, and the KG neighbours.

An ID may be given with or without its namespace (D005955 finds MESH:D005955) or be an alternative ID of a concept. 'termnorm normalize' searches text; use lookup for IDs. An unknown ID is an error (exit code 1).

Examples:

  termnorm lookup HP:0001250

  termnorm lookup D005955 D003920 --index idx/medic --json
"""

DEFAULT_MAX_RELATIONS = 20


def concept_id_queries(index: TermIndex, queries: Sequence[str]) -> list[tuple[str, str]]:
    """``(query, concept_id)`` for each query that is an ID of ``index`` (its own ID, bare
    or namespaced, or an alternative ID) rather than a term: no whitespace, some digit."""
    out = []
    for query in queries:
        text = query.strip()
        if not text or any(c.isspace() for c in text) or not any(c.isdigit() for c in text):
            continue
        row = index.resolve_id(text)
        if row is not None:
            out.append((query, str(index.concepts["concept_id"].iloc[row])))
    return out


def warn_concept_id_queries(index: TermIndex, queries: Sequence[str]) -> None:
    """One stderr line per query that is a concept ID of ``index`` (see
    :func:`concept_id_queries`), pointing to ``termnorm lookup``."""
    for query, concept_id in concept_id_queries(index, queries):
        typer.echo(
            f"warning: {query!r} is the ID of {concept_id} in this index; normalize searches "
            f"it as text. To see the concept: termnorm lookup {query}",
            err=True,
        )


def _relations_text(info: ConceptInfo, limit: int) -> str:
    if info.relations is None:
        return "(not stored: the index predates relations; rebuild it)"
    lines = []
    for rel in info.relations[:limit]:
        arrow = f"-{rel.relation}->" if rel.direction.value == "out" else f"<-{rel.relation}-"
        lines.append(f"{arrow} {rel.concept_id} {rel.name}")
    if len(info.relations) > limit:
        lines.append(f"… and {len(info.relations) - limit} more (--json shows all)")
    return "\n".join(lines) or "-"


def _print_concept(info: ConceptInfo, max_relations: int) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    table = Table(title=f"{info.concept_id}  {escape(info.name)}", show_header=False)
    table.add_column(style="bold")
    table.add_column()
    table.add_row("semantic types", ", ".join(info.semantic_types) or "-")
    table.add_row("alternative IDs", ", ".join(info.alt_ids) or "-")
    if info.attributes:
        attributes = "\n".join(f"{key}: {value}" for key, value in info.attributes.items())
        table.add_row("attributes", escape(attributes))
    terms = [
        f"{t.term}{' (preferred)' if t.is_preferred else ''}{f' [{t.source}]' if t.source else ''}"
        for t in info.synonyms
    ]
    table.add_row("terms", escape("\n".join(terms)) or "-")
    table.add_row("relations", escape(_relations_text(info, max_relations)))
    Console().print(table)


def register(app: typer.Typer) -> None:
    """Attach ``lookup`` to ``app``."""

    @app.command("lookup", help=LOOKUP_HELP)
    def lookup(
        ids: list[str] = typer.Argument(..., help="Concept IDs (namespace optional)."),
        index: Path | None = typer.Option(
            None, "--index", help="Index folder (default: the built-in HPO index)."
        ),
        max_relations: int = typer.Option(
            DEFAULT_MAX_RELATIONS, "--max-relations", min=0, help="KG neighbours shown per concept."
        ),
        json_out: bool = typer.Option(False, "--json", help="Print JSON (every neighbour)."),
    ) -> None:
        from termnorm import api
        from termnorm.errors import TermnormError
        from termnorm.index.lookup import UnknownConceptError

        if index is None:
            typer.echo("using the default index (built once on first use)", err=True)
        infos, unknown = [], []
        for concept_id in ids:
            try:
                infos.append(api.lookup(concept_id, index=index))
            except UnknownConceptError as exc:
                unknown.append(exc)
        if len(unknown) == 1:
            raise unknown[0]
        if unknown:
            missing = ", ".join(repr(exc.concept_id) for exc in unknown)
            raise TermnormError(f"{unknown[0]} (unknown: {missing})")
        if json_out:
            print_json([info.to_dict() for info in infos])
            return
        for info in infos:
            _print_concept(info, max_relations)
