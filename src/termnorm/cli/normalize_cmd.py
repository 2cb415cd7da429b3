"""``termnorm normalize``: terms on the command line, or a column of a file, to concept IDs.

Without ``--index`` the default index (HPO + all-MiniLM-L6-v2) is used, built once into the
user cache on first use. Registering is cheap; the index loads when the command runs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from termnorm.cli._help import RUNTIME_HELP
from termnorm.cli._rank_options import (
    FUSION_WEIGHT_HELP,
    IMPLICATION_HELP,
    K_C_HELP,
    MULTI_HELP,
    RANK_MODE_HELP,
    RANKER_HELP,
    THETA_HELP,
    RankOptions,
    ranked_matcher,
)
from termnorm.cli._strategy import (
    COMBINER_HELP,
    HYBRID_HELP,
    MIN_SCORE_HELP,
    MODE_HELP,
    NAMESPACE_HELP,
    STRATEGY_HELP,
    THRESHOLD_HELP,
    TYPE_HELP,
    check_mode,
    command_matcher,
    synonyms_option,
    with_learned_stages,
)
from termnorm.cli.lookup_cmd import warn_concept_id_queries
from termnorm.encoders.runtime import THREADS_HELP, Runtime
from termnorm.io.decoding import DEFAULT_ENCODING, DecodeErrors
from termnorm.mentions.abbreviations import AbbreviationMode
from termnorm.search.defaults import DEFAULT_SIEVE_THRESHOLD
from termnorm.search.engines import ENGINE_HELP, Engine

if TYPE_CHECKING:  # pragma: no cover
    from termnorm.search.batch import BatchReport
    from termnorm.search.candidate import RowMatcher, RowResult
    from termnorm.search.domain import SearchSpace

NORMALIZE_HELP = """Normalize terms to the top-k concepts of an index (score, matched term, concept name).

Give TERMs, or a file with --input FILE --output FILE (CSV, TSV, JSONL or Parquet). The output has the same rows in the same order plus concept_id, concept_name, score, matched_term and error columns; with -k above 1 also a candidates column holding the top-k as a JSON list. A row that cannot be normalized (empty, whitespace-only, not text, too long), or that gets no concept because none scored --min-score, keeps its place with the reason in error.

Abbreviations: when the file has a document or context column (or --context-column names one) holding each row's document text, short forms the document defines are expanded (Ab3P): the text is searched as written and expanded, the ranking whose top candidate scores higher is kept, and an expanded_from column holds the row's text when the expanded one was used. --abbreviations none turns this off.

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


def _print_results(terms: list[str], results: list[RowResult], json_out: bool) -> None:
    if json_out:
        payload: list[dict[str, Any]] = [
            {"query": term, "candidates": [c.to_dict() for c in result.candidates]}
            | ({"abstained": result.abstained} if result.abstained else {})
            | (
                {"concept_ids": list(result.concept_ids), "implication": result.implication}
                if result.concept_ids is not None
                else {}
            )
            for term, result in zip(terms, results, strict=True)
        ]
        typer.echo(json.dumps(payload, indent=2, ensure_ascii=False))
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


def _space(
    index: Path | None, runtime: Runtime, threads: int | None, model: Path | None = None
) -> SearchSpace:
    from termnorm import api

    if index is None:
        from termnorm.index.default import default_index_dir
        from termnorm.index.term_index import CARD_NAME

        folder = default_index_dir()
        if not (folder / CARD_NAME).is_file():
            typer.echo(
                f"building the default index (HPO + all-MiniLM-L6-v2) once into {folder}",
                err=True,
            )
    return api.search_space(index, runtime.value, threads, model=model)


def _index_identity(index: Path) -> dict[str, Any]:
    """The index folder and what its card says made it (a rebuilt index is another job)."""
    from termnorm._artifacts import read_card
    from termnorm.index.term_index import CARD_NAME
    from termnorm.search.batch import index_identity

    return {"path": str(index.resolve()), **index_identity(read_card(index, CARD_NAME, "index"))}


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
    def normalize(
        terms: list[str] | None = typer.Argument(None, help="Terms to normalize."),
        index: Path | None = typer.Option(
            None, "--index", help="Index folder (default: the built-in HPO index)."
        ),
        model: Path | None = typer.Option(
            None,
            "--model",
            help="The index's encoder folder, when it moved since the build (its fingerprint "
            "must match the index card's).",
        ),
        input: Path | None = typer.Option(None, "--input", help="File to normalize."),
        output: Path | None = typer.Option(None, "--output", help="Where to write the result."),
        column: str | None = typer.Option(
            None,
            "--column",
            help="Text column of --input. Default: the one named text/term/mention, or the "
            "only one.",
        ),
        k: int | None = typer.Option(
            None, "-k", "--k", min=1, help="Concepts per term (default 5; 1 for files)."
        ),
        mode: str = typer.Option("term", "--mode", help=MODE_HELP),
        max_chars: int = typer.Option(1000, "--max-chars", min=1, help="Longest accepted term."),
        json_out: bool = typer.Option(False, "--json", help="Print JSON."),
        synonyms: list[Path] | None = synonyms_option(),
        strategy: str | None = typer.Option(None, "--strategy", help=STRATEGY_HELP),
        sieve_threshold: float = typer.Option(
            DEFAULT_SIEVE_THRESHOLD, "--sieve-threshold", min=-1.0, max=1.0, help=THRESHOLD_HELP
        ),
        min_score: float | None = typer.Option(
            None, "--min-score", min=-1.0, max=1.0, help=MIN_SCORE_HELP
        ),
        namespaces: list[str] | None = typer.Option(None, "--namespace", help=NAMESPACE_HELP),
        types: list[str] | None = typer.Option(None, "--type", help=TYPE_HELP),
        context_column: str | None = typer.Option(
            None,
            "--context-column",
            help="Column of --input holding each row's document text (default: 'document' or "
            "'context' when present).",
        ),
        abbreviations: AbbreviationMode | None = typer.Option(
            None,
            "--abbreviations",
            help="ab3p: expand the short forms each row's document defines; none: do not. "
            "Default: ab3p when --input has a context column, none otherwise.",
        ),
        runtime: Runtime = typer.Option(Runtime.TORCH, "--runtime", help=RUNTIME_HELP),
        threads: int | None = typer.Option(None, "--threads", min=1, help=THREADS_HELP),
        hybrid: Path | None = typer.Option(None, "--hybrid", exists=True, help=HYBRID_HELP),
        combiner: Path | None = typer.Option(None, "--combiner", exists=True, help=COMBINER_HELP),
        ranker: Path | None = typer.Option(None, "--ranker", exists=True, help=RANKER_HELP),
        k_c: int = typer.Option(10, "--k-c", min=1, help=K_C_HELP),
        rank_mode: str | None = typer.Option(None, "--rank-mode", help=RANK_MODE_HELP),
        fusion_weight: float = typer.Option(0.5, "--fusion-weight", help=FUSION_WEIGHT_HELP),
        theta: float = typer.Option(0.8, "--theta", help=THETA_HELP),
        multi: bool = typer.Option(False, "--multi", help=MULTI_HELP),
        implication: Path | None = typer.Option(
            None, "--implication", exists=True, help=IMPLICATION_HELP
        ),
        prefix: str | None = typer.Option(
            None,
            "--prefix",
            help="Prefix of the added columns (e.g. termnorm_), needed when --input already "
            "has columns of those names.",
        ),
        encoding: str = typer.Option(
            DEFAULT_ENCODING,
            "--encoding",
            help="Encoding of a CSV/TSV/JSONL --input (e.g. latin-1).",
        ),
        errors: DecodeErrors = typer.Option(
            DecodeErrors.STRICT,
            "--errors",
            help="Undecodable bytes in --input: strict stops at their file:line; replace keeps "
            "the row with U+FFFD in their place.",
        ),
        restart: bool = typer.Option(
            False, "--restart", help="Drop an interrupted run's chunks and start over."
        ),
        chunk_rows: int | None = typer.Option(
            None, "--chunk-rows", min=1, help="Rows per written chunk (per Ray partition)."
        ),
        engine: Engine = typer.Option(Engine.LOCAL, "--engine", help=ENGINE_HELP),
        workers: int = typer.Option(1, "--workers", min=1, help="Ray actors (--engine ray)."),
        ray_address: str | None = typer.Option(
            None,
            "--ray-address",
            help="A running Ray cluster (e.g. ray://head:10001 or auto) instead of a local Ray; "
            "input, output and index must be on a file system every node sees.",
        ),
    ) -> None:
        from termnorm.search.query import QueryError

        rank = RankOptions.of(
            ranker, k_c, rank_mode, fusion_weight, theta, multi, implication, min_score
        )
        check_mode(mode)
        if input is None and output is not None:
            raise typer.BadParameter("--output needs --input FILE")
        if input is not None and (output is None or terms):
            raise typer.BadParameter("--input needs --output FILE and no TERM arguments")
        if input is None and not terms:
            raise typer.BadParameter("give TERM arguments, or --input FILE --output FILE")
        if input is None and (context_column or abbreviations is AbbreviationMode.AB3P):
            raise typer.BadParameter("--context-column and --abbreviations ab3p need --input FILE")
        if input is not None and output is not None and engine is Engine.LOCAL:
            from termnorm.search.batch import check_output

            check_output(input, output)  # before the index loads

        def build_matcher() -> RowMatcher:
            learned = combiner is not None or (rank is not None and rank.learned)
            recall_min = None if learned else min_score
            matcher: RowMatcher = with_learned_stages(command_matcher(
                _space(index, runtime, threads, model), mode, strategy, synonyms, sieve_threshold,
                max_chars=max_chars, min_score=recall_min, namespaces=namespaces, semantic_types=types,
            ), hybrid, combiner, min_score, threads)  # fmt: skip
            return matcher if rank is None else ranked_matcher(matcher, rank, threads)

        if input is not None and output is not None:
            settings: dict[str, Any] = {
                "index": str(index.resolve()) if index else None, "model": model and str(model),
                "mode": mode, "strategy": strategy, "synonyms": [str(s.resolve()) for s in synonyms or ()] or None,
                "sieve_threshold": sieve_threshold, "min_score": min_score, "max_chars": max_chars,
                "namespaces": namespaces, "types": types, "runtime": runtime.value,
                "rank": None if rank is None else rank.settings(),
                **({"hybrid": str(hybrid.resolve())} if hybrid is not None else {}),
                **({"combiner": str(combiner.resolve())} if combiner is not None else {}),
            }  # fmt: skip
            file_options: dict[str, Any] = {
                "column": column, "k": k or DEFAULT_K_FILES, "show_progress": True,
                "context": context_column, "abbreviations": abbreviations, "prefix": prefix,
                "restart": restart, "settings": settings,
            }  # fmt: skip
            if chunk_rows is not None:
                file_options["chunk_rows"] = chunk_rows
            if engine is Engine.RAY:
                from termnorm.search.ray_batch import import_ray, normalize_file_ray

                import_ray()  # MissingExtraError before any work
                if index is None:  # built here once, not by each worker
                    from termnorm.index.default import default_index_folder

                    index = default_index_folder()
                settings["index"] = _index_identity(index)
                report = normalize_file_ray(
                    build_matcher, input, output, workers=workers, address=ray_address,
                    multi=rank is not None and rank.multi,
                    **file_options,
                )  # fmt: skip
            else:
                from termnorm.search.batch import normalize_file

                report = normalize_file(
                    build_matcher(), input, output, encoding=encoding, errors=errors.value,
                    **file_options,
                )  # fmt: skip
            _print_report(report, json_out)
            return
        matcher = build_matcher()
        queries = list(terms or [])
        warn_concept_id_queries(
            getattr(getattr(matcher, "recall", matcher), "index", None), queries
        )
        results = matcher.normalize_rows(queries, k or DEFAULT_K_TERMS)
        for row, result in enumerate(results):
            if result.error is not None:
                raise QueryError(f"{queries[row]!r}: {result.error}")
        _print_results(queries, results, json_out)
