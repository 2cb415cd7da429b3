"""``termnorm annotate``: find the concepts of running text (a text, files, a folder).

Registering is cheap: the index, the dictionary and the encoder load when the command runs.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import typer

from termnorm.annotate.formats import OutputFormat
from termnorm.annotate.pipeline import DEFAULT_MAX_DOCUMENT_CHARS
from termnorm.annotate.windows import DEFAULT_MAX_CHARS
from termnorm.cli._detectors import (
    DetectorChoice,
    chosen_detectors,
    detectors_option,
    ner_option,
)
from termnorm.cli._strategy import spec_from_options, synonym_notice, with_spec_options

if TYPE_CHECKING:  # pragma: no cover
    from termnorm.annotate.annotation import Annotation
    from termnorm.annotate.formats import InputDocument
    from termnorm.annotate.pipeline import Annotator, DocumentAnnotations

ANNOTATE_HELP = """Find the concepts in running text: every mention of a document, normalized through the same search options as normalize, with its offsets and its negated, hypothetical, historical and family flags.

SOURCE is the text itself, a .txt file, a folder of .txt files (doc id = file stem), a JSON Lines file with an id and a text field (--id-field, --text-field), or a PubTator file (title and abstract). Offsets are code-point offsets into each document as read (CRLF kept), so text\\[start:end] is the mention.

Mentions are found by a dictionary of the index's terms and the --synonyms files and, with --ner, by a trained span tagger (--detectors picks), then each is normalized (the abbreviations the document defines are expanded); a mention whose candidates all score below --min-score is not a concept and is dropped. The normalizer decides the concept, not the dictionary.

Output: JSON Lines (default: one annotation per line, with doc_id, start, end, text, concept_id, name, score, detector, the flags, the top-k candidates and provenance), PubTator, or BRAT standoff (one .txt and .ann per document in the --out folder). Without --out, a literal text is shown as a table, other sources as JSON Lines (or PubTator) on stdout.

Bad input loses nothing: an empty, binary or non-UTF-8 file given alone stops with its path; in a folder or JSON Lines file a bad document gets its own {"doc_id", "error"} row (JSON Lines; stderr for the other formats) and the others go on. A document over --max-document-chars is refused by its id.

Examples:

  termnorm annotate "Patient denies chest pain; history of MI."

  termnorm annotate notes/ --index idx/hpo --out notes.jsonl --min-score 0.8

  termnorm annotate abstracts.jsonl --index idx/medic --id-field pmid --text-field abstract --format pubtator --out out.pubtator

  termnorm annotate report.txt --index idx/hpo --format brat --out brat/
"""


def register(app: typer.Typer) -> None:
    """Attach ``annotate`` to ``app``."""

    @app.command("annotate", help=ANNOTATE_HELP)
    @with_spec_options()
    def annotate(
        source: str = typer.Argument(..., help="A text, a .txt/JSONL/PubTator file or a folder."),
        out: Path | None = typer.Option(
            None, "--out", help="Output file (jsonl, pubtator) or folder (brat)."
        ),
        format: OutputFormat = typer.Option(OutputFormat.JSONL, "--format", help="Output format."),
        id_field: str = typer.Option("id", "--id-field", help="Doc id field of JSON Lines."),
        text_field: str = typer.Option("text", "--text-field", help="Text field of JSON Lines."),
        k: int = typer.Option(5, "-k", "--k", min=1, help="Candidates kept per annotation."),
        window_chars: int = typer.Option(
            DEFAULT_MAX_CHARS,
            "--window-chars",
            min=2,
            help="Longest window (characters) the detectors read at once; windows end on "
            "sentence boundaries and overlap, so a mention across an edge is found once.",
        ),
        max_document_chars: int = typer.Option(
            DEFAULT_MAX_DOCUMENT_CHARS,
            "--max-document-chars",
            min=1,
            help="Longest document accepted; a longer one is refused by its id.",
        ),
        rules: Path | None = typer.Option(
            None,
            "--rules",
            help="Assertion trigger rules (TSV) added to the default ones (a literal they "
            "share is replaced).",
        ),
        ner: Path | None = ner_option(),
        detectors: DetectorChoice | None = detectors_option(),
        **options: Any,
    ) -> None:
        from termnorm.annotate.formats import read_inputs, source_is_text
        from termnorm.annotate.pipeline import Annotator
        from termnorm.cli.normalize_cmd import _announce_default_index
        from termnorm.search.build import build

        spec = spec_from_options(options)
        if format is OutputFormat.BRAT and out is None:
            raise typer.BadParameter("--format brat writes a folder: give it with --out DIR")
        if spec.index is None:
            _announce_default_index()
        annotator = Annotator(
            spec,
            chosen_detectors(spec, ner, detectors),
            rules=_rules(rules),
            k=k,
            max_chars=window_chars,
            max_document_chars=max_document_chars,
            matcher=build(spec, notice=synonym_notice),
        )
        docs = read_inputs(source, id_field=id_field, text_field=text_field)
        if out is None and format is OutputFormat.JSONL and source_is_text(source):
            (doc,) = docs
            assert doc.text is not None  # a literal text is always read
            _print_table(annotator.annotate(doc.text, doc.doc_id))
            return
        counts = _write(annotator, docs, format, out)
        typer.echo(
            f"annotated {counts[0]} documents: {counts[1]} annotations, {counts[2]} refused"
            + (f"; wrote {out}" if out is not None else ""),
            err=True,
        )


def _rules(path: Path | None) -> Any:
    if path is None:
        return None
    from termnorm.annotate.assertion_rules import AssertionRules

    return AssertionRules.default().extend(AssertionRules.from_file(path))


def _results(
    annotator: Annotator, docs: Iterable[InputDocument]
) -> Iterator[tuple[InputDocument, DocumentAnnotations]]:
    """Each read document with its annotations; a document that could not be read keeps
    its read error."""
    from termnorm.annotate.pipeline import DocumentAnnotations

    for doc in docs:
        if doc.text is None:
            yield doc, DocumentAnnotations(doc.doc_id, [], doc.error)
        else:
            (result,) = annotator.annotate_many([(doc.doc_id, doc.text)])
            yield doc, result


def _write(
    annotator: Annotator, docs: Iterable[InputDocument], format: OutputFormat, out: Path | None
) -> tuple[int, int, int]:
    """Write every document's annotations; ``(documents, annotations, refused)``."""
    if format is OutputFormat.BRAT:
        assert out is not None  # checked by the command
        return _write_brat(annotator, docs, out)
    if out is None:
        return _write_stream(annotator, docs, format, typer.get_text_stream("stdout"))
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(out.name + ".partial")
    with partial.open("w", encoding="utf-8", newline="\n") as stream:
        counts = _write_stream(annotator, docs, format, stream)
    partial.replace(out)
    return counts


def _write_stream(
    annotator: Annotator, docs: Iterable[InputDocument], format: OutputFormat, stream: IO[str]
) -> tuple[int, int, int]:
    from termnorm.annotate.formats import jsonl_rows, pubtator_lines

    n_docs = n_found = n_refused = 0
    for doc, result in _results(annotator, docs):
        n_docs += 1
        n_found += len(result.annotations)
        n_refused += result.error is not None
        if format is OutputFormat.JSONL:
            for row in jsonl_rows(result.doc_id, result.annotations, result.error):
                stream.write(json.dumps(row, ensure_ascii=False) + "\n")
        elif result.error is not None:
            typer.echo(f"refused: {result.error}", err=True)
        else:
            assert doc.text is not None
            stream.write("\n".join(pubtator_lines(doc.doc_id, doc.text, result.annotations)))
            stream.write("\n")
    return n_docs, n_found, n_refused


def _write_brat(
    annotator: Annotator, docs: Iterable[InputDocument], folder: Path
) -> tuple[int, int, int]:
    from termnorm.annotate.formats import brat_ann, brat_file_stem

    folder.mkdir(parents=True, exist_ok=True)
    n_docs = n_found = n_refused = 0
    for doc, result in _results(annotator, docs):
        n_docs += 1
        if result.error is not None:
            n_refused += 1
            typer.echo(f"refused: {result.error}", err=True)
            continue
        assert doc.text is not None
        n_found += len(result.annotations)
        stem = brat_file_stem(doc.doc_id)
        (folder / f"{stem}.txt").write_text(doc.text, encoding="utf-8", newline="")
        (folder / f"{stem}.ann").write_text(
            brat_ann(result.annotations), encoding="utf-8", newline=""
        )
    return n_docs, n_found, n_refused


def _print_table(annotations: list[Annotation]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table()
    for name, justify in (("start", "right"), ("end", "right"), ("text", "left")):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for name in ("concept", "name", "score", "flags", "detector"):
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
            a.detector,
        )
    if not annotations:
        typer.echo("no concept found", err=True)
        return
    Console().print(table)
