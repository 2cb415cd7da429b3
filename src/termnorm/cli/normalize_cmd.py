"""``termnorm normalize``: terms on the command line, or a column of a file, to concept IDs.

Without ``--index`` the default index (HPO + all-MiniLM-L6-v2) is used, built once into the
user cache on first use. Registering is cheap; the index loads when the command runs.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from termnorm.cli._output import print_json
from termnorm.cli._strategy import spec_from_options, synonym_notice, with_spec_options
from termnorm.cli.lookup_cmd import warn_concept_id_queries
from termnorm.mentions.abbreviations import AbbreviationMode
from termnorm.search.candidate import rounded_scores
from termnorm.search.file_spec import NormalizeFileSpec, RowOptions

if TYPE_CHECKING:  # pragma: no cover
    from termnorm.search.batch import BatchReport
    from termnorm.search.candidate import RowResult

NORMALIZE_HELP = """Normalize terms to the top-k concepts of an index (score, matched term, concept name).

Give TERMs, or a file with --input FILE --output FILE (CSV, TSV, JSONL or Parquet). The output has the same rows in the same order plus concept_id, concept_name, score, matched_term and error columns; with -k above 1 also a candidates column holding the top-k as a JSON list. A row that cannot be normalized (empty, whitespace-only, not text, too long), or that gets no concept because none scored --min-score, keeps its place with the reason in error.

Abbreviations: when the file has a document or context column (or --context-column names one) holding each row's document text, short forms the document defines are expanded (Ab3P): the text is searched as written and expanded, the ranking whose top candidate scores higher is kept, and an expanded_from column holds the row's text when the expanded one was used (abbreviations_unread: why the row's document's abbreviations could not be read, the row then searched as written). --abbreviations none turns this off.

Nothing is lost on odd input: in JSONL the keys of every record are kept; input columns named like the added ones are refused unless --prefix names the added columns (--prefix termnorm_); a cell longer than --max-chars is that row's error; undecodable bytes stop the run at their file:line unless --encoding names the file's encoding or --errors replace keeps the row. A long run writes chunks beside the output (OUTPUT.parts/ with a progress record); run the same command again after an interruption and it resumes where it stopped (--restart starts over; other input, options or index are refused by name).

--engine ray maps a Parquet file's partitions over --workers Ray actors (each loads the index once) into an --output folder of one part per partition; a re-run skips the finished parts; --ray-address connects to a running cluster.

--json prints each candidate's provenance: the matched term, its source (ontology or domain), the KG source of the term, whether it is the preferred name, and the concept's semantic types. --namespace and --type restrict the answer to some concepts.

Without --index the default index (HPO + all-MiniLM-L6-v2) is built on first use, once, with a progress bar, and cached in the user cache folder.

Examples:

  termnorm normalize "heart attack"

  termnorm normalize "MI" "high blood pressure" --index idx/medic -k 3 --json

  termnorm normalize --index idx/medic --input mentions.csv --output mentions.norm.csv --column mention

  termnorm normalize --index idx/medic --input mentions.csv --output out.csv --column mention --context-column abstract

  termnorm normalize --index idx/medic --mode concept --input terms.jsonl --output out.jsonl -k 5

  termnorm normalize --index idx/medic --input huge.parquet --output out/ --engine ray --workers 8

  termnorm normalize "primary HPT" --index idx/medic --synonyms my_terms.tsv --strategy d-t+od-t

  termnorm normalize "fits" --namespace HP --min-score 0.8 --json

  termnorm normalize "breast and ovarian cancer" --index idx/medic --ranker rankers/ncbi-kar --multi --json
"""

DEFAULT_K_TERMS = 5
DEFAULT_K_FILES = 1
_NOT_FLAGS = ("input", "output", "pipeline", "k", "choice", "show_progress")
"""Fields of :class:`NormalizeFileSpec` the command declares itself, or does not offer."""
_FILE_FLAGS = tuple(
    p.name
    for cls in (NormalizeFileSpec, RowOptions)
    for p in dataclasses.fields(cls)
    if p.name not in _NOT_FLAGS and p.name != "rows"
)
"""The file options generated from :class:`NormalizeFileSpec` (and its rows)."""


def _print_results(terms: list[str], results: list[RowResult], json_out: bool) -> None:
    if json_out:
        payload: list[dict[str, Any]] = [
            {"query": term, "candidates": [rounded_scores(c.to_dict()) for c in result.candidates]}
            | ({"abstained": result.abstained} if result.abstained else {})
            | (
                {"concept_ids": list(result.concept_ids), "implication": result.implication}
                if result.concept_ids is not None
                else {}
            )
            for term, result in zip(terms, results, strict=True)
        ]
        print_json(payload)
        return
    from rich.console import Console
    from rich.table import Table

    table = Table()
    for name, justify in (("query", "left"), ("#", "right"), ("concept", "left")):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    table.add_column("name")
    table.add_column("score", justify="right")
    table.add_column("matched term")
    for term, result in zip(terms, results, strict=True):
        if result.abstained:
            table.add_row(term, "", "", f"({result.abstained})", "", "")
        if result.concept_ids is not None:
            codes = "|".join(result.concept_ids)
            table.add_row(term, "", codes, f"({result.implication} predicted codes)", "", "")
        for c in result.candidates:
            shown = term if c.rank == 1 else ""
            table.add_row(
                shown, str(c.rank), c.concept_id, c.name, f"{c.score:.4f}", c.matched_term
            )
        table.add_section()
    Console().print(table)


def _print_report(report: BatchReport, json_out: bool) -> None:
    if json_out:
        typer.echo(json.dumps(report.to_dict(), indent=2))
        return
    expanded = (
        f"; abbreviations ab3p from column {report.context_column!r}: "
        f"{report.expanded} rows answered through their expanded text"
        if report.context_column
        else "; abbreviations: none"
    )
    resumed = f" (resumed after {report.resumed_from} rows)" if report.resumed_from else ""
    parts = (
        f"; {report.parts} parts written, {report.skipped_parts} finished earlier"
        if report.parts or report.skipped_parts
        else ""
    )
    replaced = (
        f"; undecodable bytes replaced on {len(report.replaced_lines)} lines"
        if report.replaced_lines
        else ""
    )
    typer.echo(
        f"wrote {report.rows} rows{resumed} ({report.errors} with errors, "
        f"{report.abstained} abstained) to {report.output} from column "
        f"{report.column!r}{expanded}{parts}{replaced}"
    )


def register(app: typer.Typer) -> None:
    """Attach ``normalize`` to ``app``."""

    @app.command("normalize", help=NORMALIZE_HELP)
    @with_spec_options(exclude=_NOT_FLAGS, settings=(NormalizeFileSpec,))
    def normalize(
        terms: list[str] | None = typer.Argument(None, help="Terms to normalize."),
        input: Path | None = typer.Option(None, "--input", help="File to normalize."),
        output: Path | None = typer.Option(None, "--output", help="Where to write the result."),
        k: int | None = typer.Option(
            None, "-k", "--k", min=1, help="Concepts per term (default 5; 1 for files)."
        ),
        json_out: bool = typer.Option(False, "--json", help="Print JSON."),
        **options: Any,
    ) -> None:
        files = {name: options.pop(name) for name in _FILE_FLAGS}
        spec = spec_from_options(options)
        context_column, abbreviations = files["context_column"], files["abbreviations"]
        if input is None and output is not None:
            raise typer.BadParameter("--output needs --input FILE")
        if input is not None and (output is None or terms):
            raise typer.BadParameter("--input needs --output FILE and no TERM arguments")
        if input is None and not terms:
            raise typer.BadParameter("give TERM arguments, or --input FILE --output FILE")
        if input is None and (context_column or abbreviations is AbbreviationMode.AB3P):
            raise typer.BadParameter("--context-column and --abbreviations ab3p need --input FILE")
        if spec.index is None:
            _announce_default_index()
        if input is not None and output is not None:
            from termnorm.search.job import normalize_file_job

            try:
                job = NormalizeFileSpec.of(
                    input, output, pipeline=spec, k=k or DEFAULT_K_FILES, **files
                )
            except ValueError as exc:
                raise typer.BadParameter(str(exc)) from None
            report = normalize_file_job(job, notice=synonym_notice)
            _print_report(report, json_out)
            return
        from termnorm.search.build import build, resolve_index
        from termnorm.search.candidate import candidates_or_raise

        matcher = build(spec, notice=synonym_notice)
        queries = list(terms or [])
        warn_concept_id_queries(resolve_index(spec.index), queries)  # the matcher's, cached
        results = matcher.normalize_rows(queries, k or DEFAULT_K_TERMS)
        candidates_or_raise(results, queries)
        _print_results(queries, results, json_out)


def _announce_default_index() -> None:
    """Say on stderr that the default index is built now (once), before it is."""
    from termnorm.index.default import default_index_dir
    from termnorm.index.term_index import CARD_NAME

    folder = default_index_dir()
    if not (folder / CARD_NAME).is_file():
        typer.echo(
            f"building the default index (HPO + all-MiniLM-L6-v2) once into {folder}", err=True
        )
