"""Normalize a column of a CSV/TSV/JSONL/Parquet file, row for row.

Contract: the output has exactly one row per input row, in order, with every input column
unchanged and these columns appended:

``concept_id``, ``concept_name``, ``score``, ``matched_term``
    the best concept (empty/null when the row failed); scores rounded to 6 decimals;
``candidates`` (only when ``k > 1``)
    the top-``k`` as a list of ``{rank, concept_id, concept_name, score, matched_term,
    source, term_source, is_preferred, semantic_types}``: a JSON string in
    CSV/TSV/Parquet, a native list in JSONL;
``error``
    empty/null, or why the row has no concept: the input could not be normalized (empty,
    whitespace-only, not text, too long), or the matcher abstained (no concept scored at
    least its ``min_score``: ``"no concept scored >= 0.8"``). :class:`BatchReport` counts
    the two apart (``errors``, ``abstained``).

``expanded_from``, ``abbreviations_unread`` (only when abbreviations are expanded)
    empty/null, or the row's text when the concept was found through its
    abbreviation-expanded text; the candidates then carry ``expanded_from`` too.
    ``abbreviations_unread``: empty/null, or why Ab3P could not read the abbreviations of
    the row's document (it crashed on it): the row was then normalized as written.

The text column is ``column``, else the one column named like a text (:data:`TEXT_COLUMNS`,
any case), else the only column; otherwise the run is refused, listing the columns
(``BatchReport.column`` says which column was used).
Abbreviations: with a context column (``context_column``, else ``document`` or ``context``
when present) holding each row's document text, a text is expanded through the short forms
its own document defines and searched as written and expanded, one of the two rankings kept
(:class:`~termnorm.search.context.ContextMatcher`); ``abbreviations="none"`` turns this off,
``"ab3p"`` without a context column is an error. The output format follows the output suffix (the input's format when the suffix is unknown).

Input columns named like an added column (``concept_id``, ``error``, ...; in JSONL a key of
any record) are never overwritten: the run is refused naming them, unless ``prefix`` names
the added columns (``prefix="termnorm_"`` → ``termnorm_concept_id``, ...). Text files are
decoded with ``encoding`` and ``errors`` (:mod:`termnorm.io.tables`: strict stops at the
first undecodable bytes naming file and line, replace keeps the row with U+FFFD and
``BatchReport.replaced_lines`` lists the lines). A cell longer than the matcher's
``max_chars`` is that row's error, never the file's.

Resumable: the file is streamed in chunks of ``chunk_rows`` rows, each written as one part
beside the output with a progress record (:mod:`termnorm.io.resumable`); an interrupted run
run again with the same input, options and index resumes after the last finished chunk, and
the output then holds every input row exactly once, in order. Another input, options or index
is refused naming what changed (``restart=True`` starts over). The output file appears only
when the run ends; a failed run leaves an existing output untouched.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
from tqdm.auto import tqdm

from termnorm.errors import InputFormatError
from termnorm.io.resumable import ResumableOutput
from termnorm.io.tables import (
    SUFFIXES,
    Record,
    TableFormat,
    TableReader,
    detect_format,
    open_reader,
)
from termnorm.mentions.abbreviations import AbbreviationMode, parse_abbreviation_mode
from termnorm.search.candidate import SCORE_DECIMALS, Candidate, RowMatcher, RowResult
from termnorm.search.context import ContextMatcher, ExpansionChoice
from termnorm.search.file_spec import DEFAULT_CHUNK_ROWS, NormalizeFileSpec, RowOptions
from termnorm.search.identity import canonical

__all__ = [
    "CONTEXT_COLUMNS",
    "DEFAULT_CHUNK_ROWS",
    "BatchReport",
    "ChunkCounts",
    "RowSpec",
    "added_columns",
    "check_output",
    "context_column",
    "input_identity",
    "normalize_file",
    "normalize_records",
    "output_schema",
    "row_spec",
    "text_column",
]

logger = logging.getLogger(__name__)

TEXT_COLUMNS = ("text", "texts", "term", "terms", "mention", "mentions")
"""Column names (case-insensitive) taken as the text column when none is named."""
CONTEXT_COLUMNS = ("document", "context")
"""Columns taken as the rows' document text when no context column is named."""
_TOP1 = {"concept_id": pa.string(), "concept_name": pa.string(), "score": pa.float64()}
_TYPES = {
    **_TOP1,
    "matched_term": pa.string(),
    "candidates": pa.string(),
    "error": pa.string(),
    "expanded_from": pa.string(),
    "abbreviations_unread": pa.string(),
    "concept_ids": pa.string(),
    "implication": pa.int64(),
}


@dataclass
class BatchReport:
    """What :func:`normalize_file` did."""

    input: Path
    output: Path
    column: str
    rows: int = 0
    errors: int = 0
    abstained: int = 0
    abbreviations: str = AbbreviationMode.NONE.value
    context_column: str | None = None
    expanded: int = 0
    resumed_from: int = 0
    """Rows already written by an interrupted run this one resumed (0: a fresh run)."""
    replaced_lines: list[int] = field(default_factory=list)
    """Lines whose undecodable bytes were replaced (``errors="replace"``)."""
    prefix: str = ""
    parts: int = 0
    """Output parts written by this run (``engine="ray"``)."""
    skipped_parts: int = 0
    """Output parts already finished by an earlier run, left as they were (``engine="ray"``)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form for ``--json`` (the fields, paths as strings)."""
        return {**dataclasses.asdict(self), "input": str(self.input), "output": str(self.output)}


def added_columns(k: int, expanded: bool = False, multi: bool = False) -> list[str]:
    """Names of the columns appended to every row for a top-``k`` run (``expanded``: with
    abbreviation expansion; ``multi``: multi-code output of a ranker with an implication
    predictor, ``concept_ids`` ``|``-joined and the predicted ``implication``)."""
    top = ["concept_id", "concept_name", "score", "matched_term"]
    added = [*top, "candidates", "error"] if k > 1 else [*top, "error"]
    added = [*added, "expanded_from", "abbreviations_unread"] if expanded else added
    return [*added, "concept_ids", "implication"] if multi else added


def check_output(input: Path, output: Path) -> None:
    """:class:`ValueError` when ``output`` is a folder or the same file as ``input``."""
    if output.is_dir():
        raise ValueError(
            f"--output {output} is a folder; give a file path, e.g. "
            f"{output / (input.stem + '.norm' + (input.suffix or '.csv'))}"
        )
    same = os.path.abspath(output) == os.path.abspath(input)
    if same or (output.exists() and input.exists() and output.samefile(input)):
        raise ValueError(
            f"--output {output} is the input file; writing there would overwrite it. "
            f"Choose another --output, e.g. {input.with_name(input.stem + '.norm' + input.suffix)}"
        )


def text_column(reader: TableReader, column: str | None) -> str:
    """``column`` (checked), else the one column named like :data:`TEXT_COLUMNS`, else the
    only column; :class:`InputFormatError` listing the columns when that is not one."""
    if column is not None:
        if column not in reader.columns:
            raise InputFormatError(
                reader.path, None, f"no column {column!r}; columns are {reader.columns}"
            )
        return column
    if not reader.columns:
        raise InputFormatError(reader.path, None, "the file has no column (is it empty?)")
    named = [c for c in reader.columns if c.strip().lower() in TEXT_COLUMNS]
    if len(named) == 1:
        return named[0]
    if len(reader.columns) == 1:
        return reader.columns[0]
    why = f"several text-like columns {named}" if named else "no column named text/term/mention"
    raise InputFormatError(
        reader.path,
        None,
        f"{why}; name the text column with --column (column= in the API); "
        f"columns are {reader.columns}",
    )


def context_column(
    reader: TableReader, column: str | None, mode: AbbreviationMode | str | None
) -> tuple[AbbreviationMode, str | None]:
    """The abbreviation mode and the context column a run uses.

    ``column`` (checked), else the first of :data:`CONTEXT_COLUMNS` present. ``mode``
    ``None`` means ab3p when there is a context column, none otherwise; ``ab3p`` without a
    context column is an error.
    """
    if column is not None and column not in reader.columns:
        raise InputFormatError(
            reader.path, None, f"no context column {column!r}; columns are {reader.columns}"
        )
    found = column or next((c for c in CONTEXT_COLUMNS if c in reader.columns), None)
    if mode is None:
        return (AbbreviationMode.AB3P if found else AbbreviationMode.NONE), found
    mode = parse_abbreviation_mode(mode)
    if mode is AbbreviationMode.NONE:
        return mode, None
    if found is None:
        raise InputFormatError(
            reader.path,
            None,
            "abbreviation expansion needs each row's document text: add a 'document' or "
            "'context' column, or name one with the context column option",
        )
    return mode, found


def _candidate_dict(c: Candidate, expanded: bool) -> dict[str, Any]:
    extra = {"expanded_from": c.expanded_from} if expanded else {}
    return {
        "rank": c.rank,
        "concept_id": c.concept_id,
        "concept_name": c.name,
        "score": round(c.score, SCORE_DECIMALS),
        "matched_term": c.matched_term,
        "source": c.source,
        "term_source": c.term_source,
        "is_preferred": c.is_preferred,
        "semantic_types": list(c.semantic_types),
        **extra,
    }


def _fields(
    result: RowResult,
    k: int,
    native_lists: bool,
    expanded: bool,
    multi: bool = False,
    unread: str | None = None,
) -> dict[str, Any]:
    """The appended columns of one row (``unread``: why its document's abbreviations could
    not be read)."""
    best = result.candidates[0] if result.candidates else None
    fields: dict[str, Any] = {
        "concept_id": best.concept_id if best else None,
        "concept_name": best.name if best else None,
        "score": round(best.score, SCORE_DECIMALS) if best else None,
        "matched_term": best.matched_term if best else None,
    }
    if k > 1:
        listed = [_candidate_dict(c, expanded) for c in result.candidates]
        fields["candidates"] = (
            listed if native_lists else (json.dumps(listed, ensure_ascii=False) if best else None)
        )
    fields["error"] = result.error or result.abstained
    if expanded:
        fields["expanded_from"] = best.expanded_from if best else None
        fields["abbreviations_unread"] = unread
    if multi:
        codes = result.concept_ids
        fields["concept_ids"] = "|".join(codes) if codes else None
        fields["implication"] = result.implication
    return fields


@dataclass(frozen=True)
class RowSpec:
    """How a chunk of records is normalized: the text ``column``, ``k``, the ``context``
    column and abbreviation ``mode``, candidates as native lists (JSONL) or JSON text, the
    ``prefix`` of the added columns and the ``choice`` between expanded and original text."""

    column: str
    k: int = 1
    context: str | None = None
    mode: AbbreviationMode = AbbreviationMode.NONE
    native_lists: bool = False
    prefix: str = ""
    choice: ExpansionChoice | None = None
    multi: bool = False

    @property
    def expanding(self) -> bool:
        """Whether abbreviations are expanded (an ``expanded_from`` column is added)."""
        return self.context is not None and self.mode is not AbbreviationMode.NONE

    @property
    def added(self) -> list[str]:
        """The added columns' names, prefixed."""
        return [self.prefix + c for c in added_columns(self.k, self.expanding, self.multi)]

    def record(self) -> dict[str, Any]:
        """These settings as a resumable job records them (both engines)."""
        return {
            "column": self.column,
            "k": self.k,
            "context_column": self.context,
            "abbreviations": self.mode.value,
            "choice": canonical(self.choice),
            "prefix": self.prefix,
        }

    def report(self, input: Path, output: Path, **counts: Any) -> BatchReport:
        """The :class:`BatchReport` of a run over ``input`` with these settings."""
        return BatchReport(
            input,
            output,
            self.column,
            abbreviations=self.mode.value,
            context_column=self.context,
            prefix=self.prefix,
            **counts,
        )


@dataclass
class ChunkCounts:
    """Counts of one chunk (or a whole file): rows, errors, abstained, expanded."""

    rows: int = 0
    errors: int = 0
    abstained: int = 0
    expanded: int = 0

    def as_dict(self) -> dict[str, int]:
        """The counts by name (what a progress record keeps)."""
        return dataclasses.asdict(self)


def row_spec(
    reader: TableReader, rows: RowOptions, out_format: TableFormat, multi: bool = False
) -> RowSpec:
    """The :class:`RowSpec` of ``rows`` over ``reader``: text and context columns chosen and
    checked, and the added columns refused when the input already has one of them."""
    name = text_column(reader, rows.column)
    mode, found = context_column(reader, rows.context_column, rows.abbreviations)
    jsonl = out_format is TableFormat.JSONL
    spec = RowSpec(name, rows.k, found, mode, jsonl, rows.prefix or "", rows.choice, multi)
    clash = [c for c in spec.added if c in reader.columns]
    if clash:
        example = ", ".join(f"termnorm_{c}" for c in added_columns(rows.k, spec.expanding)[:2])
        raise InputFormatError(
            reader.path,
            None,
            f"already has column(s) {', '.join(clash)}, which termnorm adds (is it a termnorm "
            f"output?); give --prefix termnorm_ (prefix= in the API) to add {example}, ... "
            "instead, or rename yours",
        )
    return spec


def normalize_records(
    matcher: RowMatcher, records: list[Record], spec: RowSpec
) -> tuple[list[Record], ChunkCounts]:
    """``records`` with the added columns of :class:`RowSpec` ``spec``, one per record, in
    order, and their counts. The local and the Ray engine both call this per chunk."""
    texts = [r.get(spec.column) for r in records]
    counts = ChunkCounts(rows=len(records))
    unread: list[str | None] = [None] * len(records)
    if spec.expanding:
        contexts = [r.get(spec.context) if spec.context else None for r in records]
        results, unread = ContextMatcher(matcher, spec.choice).answer_in_context(
            texts, contexts, spec.k, spec.mode
        )
        counts.expanded = sum(
            bool(res.candidates) and res.candidates[0].expanded_from is not None for res in results
        )
    else:
        results = matcher.normalize_rows(texts, spec.k)
    rows: list[Record] = []
    for r, res, why in zip(records, results, unread, strict=True):
        added = _fields(res, spec.k, spec.native_lists, spec.expanding, spec.multi, why)
        rows.append({**r, **{spec.prefix + c: v for c, v in added.items()}})
    counts.errors = sum(res.error is not None for res in results)
    counts.abstained = sum(res.abstained is not None for res in results)
    return rows, counts


def output_schema(schema: pa.Schema | None, spec: RowSpec) -> pa.Schema | None:
    """Input types (when known) + the added columns' types."""
    if schema is None:
        return None
    names = added_columns(spec.k, spec.expanding, spec.multi)
    added = [pa.field(spec.prefix + c, _TYPES[c]) for c in names]
    return pa.schema([*schema, *added])


def input_identity(path: Path) -> dict[str, Any]:
    """A file's identity for resuming: its resolved path, size and modification time."""
    stat = path.stat()
    return {"path": str(path.resolve()), "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


def normalize_file(
    matcher: RowMatcher, job: NormalizeFileSpec, settings: Mapping[str, Any] | None = None
) -> BatchReport:
    """Normalize the rows ``job.rows`` asks for of ``job.input`` into ``job.output`` with
    ``matcher`` (see the module docstring; ``job.pipeline`` and its engine fields are the
    caller's, who built ``matcher``).

    Resuming: an unfinished run of the same job is continued; the job is the input file
    (path, size, modification time), the row and decoding options, the matcher's own
    ``identity()`` and the caller's ``settings`` (the
    :class:`~termnorm.search.spec.PipelineSpec` that built it); any change is refused
    (:class:`~termnorm.io.resumable.ResumeError`) unless ``job.restart``. A second run on the
    same output while this one runs fails at once
    (:class:`~termnorm.io.output_lock.OutputBusyError`). Checked before any work: the output
    may not be a folder nor the input file itself (:class:`ValueError`)."""
    input, output = job.input, job.output
    check_output(input, output)
    reader = open_reader(input, encoding=job.encoding, errors=job.errors)
    out_format = SUFFIXES.get(output.suffix.lower(), detect_format(input))
    multi = getattr(matcher, "implication", None) is not None
    spec = row_spec(reader, job.rows, out_format, multi)
    logger.info("normalizing column %r of %s", spec.column, input)
    record = {
        "input": input_identity(input),
        "output_format": out_format.value,
        **spec.record(),
        "encoding": job.encoding,
        "errors": job.errors.value,
        "matcher": matcher.identity(),
        "settings": canonical(settings or {}),
    }
    schema = output_schema(reader.schema, spec) if out_format is TableFormat.PARQUET else None
    out = ResumableOutput(
        output, out_format, [*reader.columns, *spec.added], schema, record, restart=job.restart
    )
    report = spec.report(input, output, resumed_from=out.rows_done)
    if out.rows_done:
        logger.info("resuming after %d of %d rows", out.rows_done, reader.num_rows)
    else:
        logger.info("writing chunks into %s; if interrupted, run again to resume", out.work)
    bar = tqdm(
        total=reader.num_rows,
        initial=out.rows_done,
        desc="normalizing",
        unit="row",
        disable=not job.show_progress,
    )
    try:
        for records in reader.chunks(job.chunk_rows, skip=out.rows_done):
            rows, counts = normalize_records(matcher, records, spec)
            out.write_part(rows, {k: v for k, v in counts.as_dict().items() if k != "rows"})
            bar.update(len(rows))
        out.finish()
    finally:
        out.close()  # the output's lock, held since ResumableOutput opened it
        bar.close()
    totals = out.totals()
    report.rows = totals["rows"]
    report.errors, report.abstained = totals.get("errors", 0), totals.get("abstained", 0)
    report.expanded = totals.get("expanded", 0)
    report.replaced_lines = list(reader.replaced_lines)
    if report.replaced_lines:
        shown = ", ".join(map(str, report.replaced_lines[:10]))
        logger.warning(
            "%s: undecodable bytes replaced on %d line(s): %s",
            input,
            len(report.replaced_lines),
            shown,
        )
    logger.info(
        "abbreviations: %s (context column %s, %d rows answered expanded)",
        report.abbreviations,
        report.context_column,
        report.expanded,
    )
    logger.info(
        "normalized %d rows (%d errors, %d abstained) into %s",
        report.rows,
        report.errors,
        report.abstained,
        output,
    )
    return report
