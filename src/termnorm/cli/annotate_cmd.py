"""``termnorm annotate``: find the concepts of running text (a text, files, a folder).

Registering is cheap: the index, the dictionary and the encoder load when the command runs.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from termnorm.annotate.chunks import DEFAULT_CHUNK_DOCS
from termnorm.annotate.formats import OutputFormat
from termnorm.annotate.spec import AnnotateSpec
from termnorm.cli._options import (
    json_option,
    ray_address_option,
    restart_option,
    workers_option,
)
from termnorm.cli._strategy import spec_from_options, synonym_notice, with_spec_options
from termnorm.engines import Engine

if TYPE_CHECKING:  # pragma: no cover
    from termnorm.annotate.annotation import Annotation
    from termnorm.annotate.formats import InputDocument
    from termnorm.annotate.pipeline import Annotator

ANNOTATE_HELP = """Find the concepts in running text: every mention of a document, normalized through the same search options as normalize, with its offsets and its negated, hypothetical, historical and family flags.

SOURCE is the text itself, a .txt file, a folder of .txt files (doc id = file stem), a JSON Lines file with an id and a text field (--id-field, --text-field), or a PubTator file (title and abstract). Offsets are code-point offsets into each document as read (CRLF kept), so text\\[start:end] is the mention.

Mentions are found by a dictionary of the index's terms and the --synonyms files and, with --ner, by a trained span tagger (--detectors picks), then each is normalized (the abbreviations the document defines are expanded); a mention whose candidates all score below --min-score is not a concept and is dropped. The normalizer decides the concept, not the dictionary.

Output: JSON Lines (default: one annotation per line, with doc_id, start, end, text, concept_id, name, score, detector, the flags, the modifiers (over HPO: the clinical modifiers and frequency that qualify the finding, --findings), the top-k candidates and provenance), PubTator, or BRAT standoff (one .txt and .ann per document in the --out folder). Without --out, a literal text is shown as a table, other sources as JSON Lines (or PubTator) on stdout.

With --out the run is a resumable batch job: the documents are annotated in chunks (--chunk-docs), each finished chunk kept in OUT.parts/ beside the output; after an interruption (even kill -9) run the same command again and it goes on where it stopped, every document in the output exactly once (--restart starts over; another source, format or search option is refused by name). OUT appears when the run ends. --engine ray maps the chunks over --workers Ray actors (each loads the index once) with the same output; --ray-address connects to a running cluster.

Every document is in the JSON Lines output: its annotations, or one {"doc_id", "annotations": 0} row when nothing was found in it. --json prints a literal text's annotations as JSON Lines rows instead of a table, and an --out run's report as one JSON object.

Bad input loses nothing: an empty, binary or non-UTF-8 file given alone stops with its path; in a folder or JSON Lines file a bad document (not text, a lone surrogate, over --max-document-chars) gets its own {"doc_id", "error"} row (JSON Lines; stderr for the other formats) and the others go on. A text or file given alone that is refused (over --max-document-chars, say) gets its error row and exits 1, as an empty file does. A document whose abbreviations cannot be read is annotated without its short forms, its rows carrying a "warning".

Examples:

  termnorm annotate "Patient denies chest pain; history of MI."

  termnorm annotate "Pas d'hypertension." --index idx/fr --language fr

  termnorm annotate notes/ --index idx/hpo --out notes.jsonl --min-score 0.8

  termnorm annotate abstracts.jsonl --index idx/medic --id-field pmid --text-field abstract --format pubtator --out out.pubtator

  termnorm annotate report.txt --index idx/hpo --format brat --out brat/

  termnorm annotate abstracts.jsonl --index idx/medic --out out.jsonl --engine ray --workers 8
"""


def register(app: typer.Typer) -> None:
    """Attach ``annotate`` to ``app``."""

    @app.command("annotate", help=ANNOTATE_HELP)
    @with_spec_options(settings=[AnnotateSpec], exclude=("search",))
    def annotate(
        source: str = typer.Argument(..., help="A text, a .txt/JSONL/PubTator file or a folder."),
        out: Path | None = typer.Option(
            None, "--out", help="Output file (jsonl, pubtator) or folder (brat)."
        ),
        format: OutputFormat = typer.Option(OutputFormat.JSONL, "--format", help="Output format."),
        id_field: str = typer.Option("id", "--id-field", help="Doc id field of JSON Lines."),
        text_field: str = typer.Option("text", "--text-field", help="Text field of JSON Lines."),
        restart: bool = restart_option(),
        chunk_docs: int = typer.Option(
            DEFAULT_CHUNK_DOCS, "--chunk-docs", min=1, help="Documents per committed chunk."
        ),
        engine: Engine = typer.Option(
            Engine.LOCAL,
            "--engine",
            help="local: this process; ray: a pool of Ray actors (--workers), each loading "
            "the index once (needs the ray extra and --out).",
        ),
        workers: int = workers_option(),
        ray_address: str | None = ray_address_option("the index"),
        json_out: bool = json_option(),
        **options: Any,
    ) -> None:
        from termnorm.cli.normalize_cmd import _announce_default_index

        spec = annotate_spec_from_options(options)
        if format is OutputFormat.BRAT and out is None:
            raise typer.BadParameter("--format brat writes a folder: give it with --out DIR")
        if engine is Engine.RAY and out is None:
            raise typer.BadParameter("--engine ray writes a batch job: give it with --out")
        if spec.search.index is None:
            _announce_default_index()
        if out is not None:
            from termnorm.annotate.batch import annotate_file

            report = annotate_file(
                spec,
                source,
                out,
                fmt=format,
                id_field=id_field,
                text_field=text_field,
                chunk_docs=chunk_docs,
                restart=restart,
                engine=engine,
                workers=workers,
                address=ray_address,
                notice=synonym_notice,
            )
            resumed = f" (resumed after {report.resumed_from})" if report.resumed_from else ""
            if json_out:
                typer.echo(json.dumps(report.to_dict()))
            typer.echo(
                f"annotated {report.documents} documents{resumed}: {report.annotations} "
                f"annotations, {report.refused} refused; wrote {out}",
                err=True,
            )
            _exit_when_refused_alone(source, report.documents, report.refused)
            return
        from termnorm.annotate.detectors import build_annotator
        from termnorm.annotate.formats import read_inputs, source_is_text
        from termnorm.search.build import build

        annotator = build_annotator(spec, build_search=partial(build, notice=synonym_notice))
        docs = read_inputs(source, id_field=id_field, text_field=text_field)
        if format is OutputFormat.JSONL and source_is_text(source) and not json_out:
            (doc,) = docs
            assert doc.text is not None  # a literal text is always read
            _print_table(annotator.annotate(doc.text, doc.doc_id))
            choice = annotator.language_of(doc.text)
            typer.echo(
                f"assertion rules: {choice.language.value} ({choice.source.value})", err=True
            )
            return
        counts = _stream(annotator, docs, format)
        typer.echo(
            f"annotated {counts[0]} documents: {counts[1]} annotations, {counts[2]} refused",
            err=True,
        )
        _exit_when_refused_alone(source, counts[0], counts[2])


def annotate_spec_from_options(options: dict[str, Any], **search: Any) -> AnnotateSpec:
    """The :class:`AnnotateSpec` of a command's generated options (its own fields, the rest
    the pipeline spec's, plus ``search`` fields); a refusal (an unknown detector listing the
    known ones, a tagger without ``--ner``) is a :class:`typer.BadParameter` naming it."""
    own = {name: options.pop(name) for name in AnnotateSpec.__dataclass_fields__ if name in options}
    try:
        return AnnotateSpec(spec_from_options(options, **search), **own)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None


def _exit_when_refused_alone(source: str, documents: int, refused: int) -> None:
    """Exit 1 when ``source`` is a text or a file given alone (not a folder nor JSON Lines,
    whose bad documents are rows among the others) and all its documents were refused, as an
    empty or binary file given alone is; the refusal is already in the output or on stderr."""
    from termnorm.annotate.formats import source_is_collection

    if documents and refused == documents and not source_is_collection(source):
        typer.echo(f"error: {source} was refused; see its error row (or stderr) for why", err=True)
        raise typer.Exit(1)


def _stream(
    annotator: Annotator, docs: Iterable[InputDocument], format: OutputFormat
) -> tuple[int, int, int]:
    """Write each document's annotations to stdout as it is done; ``(documents,
    annotations, refused)``."""
    from termnorm.annotate.chunks import annotate_chunk

    stream = typer.get_text_stream("stdout")
    n_docs = n_found = n_refused = 0
    for doc in docs:
        chunk = annotate_chunk(annotator, [doc], format)
        stream.write(chunk.text)
        if format is not OutputFormat.JSONL:
            for error in chunk.refused:
                typer.echo(f"refused: {error}", err=True)
        n_docs += 1
        n_found += chunk.counts.annotations
        n_refused += chunk.counts.refused
    return n_docs, n_found, n_refused


def _print_table(annotations: list[Annotation]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table()
    for name, justify in (("start", "right"), ("end", "right"), ("text", "left")):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    qualified = any(a.modifiers for a in annotations)  # a modifiers column only then
    for name in ("concept", "name", "score", "flags", "modifiers", "detector"):
        if name != "modifiers" or qualified:
            table.add_column(name, justify="right" if name == "score" else "left")
    for a in annotations:
        flags = ",".join(
            f for f in ("negated", "hypothetical", "historical", "family") if getattr(a, f)
        )
        shown = a.text if a.expanded_from is None else f"{a.text} (expanded)"
        table.add_row(
            str(a.start),
            str(a.end),
            shown,
            a.concept_id,
            a.name,
            f"{a.score:.4f}",
            flags,
            *([", ".join(a.modifiers)] if qualified else []),
            a.detector,
        )
    if not annotations:
        typer.echo("no concept found", err=True)
        return
    Console().print(table)
