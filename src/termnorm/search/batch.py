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

``expanded_from`` (only when abbreviations are expanded)
    empty/null, or the row's text when the concept was found through its
    abbreviation-expanded text; the candidates then carry ``expanded_from`` too.

The text column is ``column``, else the one column named like a text (:data:`TEXT_COLUMNS`,
any case), else the only column; otherwise the run is refused, listing the columns
(``BatchReport.column`` says which column was used).
Abbreviations: with a context column (``context_column``, else ``document`` or ``context``
when present) holding each row's document text, a text is expanded through the short forms
its own document defines and searched as written and expanded, one of the two rankings kept
(:class:`~termnorm.search.context.ContextMatcher`); ``abbreviations="none"`` turns this off,
``"ab3p"`` without a context column is an error. The output format follows the output suffix (the input's format when the suffix is unknown). The file is streamed in chunks and written
atomically (a failed run leaves no output file).
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
from tqdm.auto import tqdm

from termnorm.errors import InputFormatError
from termnorm.io.tables import (
    SUFFIXES,
    Record,
    TableFormat,
    TableReader,
    atomic_file,
    detect_format,
    open_reader,
    open_writer,
)
from termnorm.mentions.abbreviations import AbbreviationMode, parse_abbreviation_mode
from termnorm.search.candidate import Candidate, RowMatcher, RowResult
from termnorm.search.context import ContextMatcher, ExpansionChoice

__all__ = [
    "CONTEXT_COLUMNS",
    "DEFAULT_CHUNK_ROWS",
    "BatchReport",
    "added_columns",
    "check_output",
    "context_column",
    "normalize_file",
    "text_column",
]

logger = logging.getLogger(__name__)

DEFAULT_CHUNK_ROWS = 4096
TEXT_COLUMNS = ("text", "texts", "term", "terms", "mention", "mentions")
"""Column names (case-insensitive) taken as the text column when none is named."""
CONTEXT_COLUMNS = ("document", "context")
"""Columns taken as the rows' document text when no context column is named."""
SCORE_DECIMALS = 6
_TOP1 = {"concept_id": pa.string(), "concept_name": pa.string(), "score": pa.float64()}
_TYPES = {
    **_TOP1,
    "matched_term": pa.string(),
    "candidates": pa.string(),
    "error": pa.string(),
    "expanded_from": pa.string(),
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

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form for ``--json``."""
        return {
            "input": str(self.input),
            "output": str(self.output),
            "column": self.column,
            "rows": self.rows,
            "errors": self.errors,
            "abstained": self.abstained,
            "abbreviations": self.abbreviations,
            "context_column": self.context_column,
            "expanded": self.expanded,
        }


def added_columns(k: int, expanded: bool = False) -> list[str]:
    """Names of the columns appended to every row for a top-``k`` run (``expanded``: with
    abbreviation expansion)."""
    top = ["concept_id", "concept_name", "score", "matched_term"]
    added = [*top, "candidates", "error"] if k > 1 else [*top, "error"]
    return [*added, "expanded_from"] if expanded else added


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


def _fields(result: RowResult, k: int, native_lists: bool, expanded: bool) -> dict[str, Any]:
    """The appended columns of one row."""
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
    return fields


def _output_schema(reader: TableReader, added_names: list[str]) -> pa.Schema | None:
    """Input types (when known) + the appended columns' types."""
    if reader.schema is None:
        return None
    added = [pa.field(name, _TYPES[name]) for name in added_names]
    return pa.schema([*reader.schema, *added])


def normalize_file(
    matcher: RowMatcher,
    input: str | Path,
    output: str | Path,
    column: str | None = None,
    k: int = 1,
    chunk_rows: int = DEFAULT_CHUNK_ROWS,
    show_progress: bool = True,
    context: str | None = None,
    abbreviations: AbbreviationMode | str | None = None,
    choice: ExpansionChoice | None = None,
) -> BatchReport:
    """Normalize ``column`` of ``input`` into ``output`` with ``matcher`` (see the module
    docstring). ``context`` names the context column, ``abbreviations`` the mode (``None``:
    ab3p when there is a context column), ``choice`` which ranking to keep. Checked before
    any work: ``output`` may not be a folder nor the input file itself (:class:`ValueError`)."""
    input, output = Path(input), Path(output)
    check_output(input, output)
    reader = open_reader(input)
    out_format = SUFFIXES.get(output.suffix.lower(), detect_format(input))
    name = text_column(reader, column)
    logger.info("normalizing column %r of %s", name, input)
    mode, context = context_column(reader, context, abbreviations)
    expanding = mode is not AbbreviationMode.NONE
    added = added_columns(k, expanding)
    clash = [c for c in added if c in reader.columns]
    if clash:
        raise InputFormatError(
            input,
            None,
            f"already has column(s) {', '.join(clash)} (is it a termnorm output?); "
            "rename or drop them first",
        )
    native = out_format is TableFormat.JSONL
    schema = _output_schema(reader, added) if out_format is TableFormat.PARQUET else None
    report = BatchReport(input, output, name, abbreviations=mode.value, context_column=context)
    in_context = ContextMatcher(matcher, choice)
    bar = tqdm(total=reader.num_rows, desc="normalizing", unit="row", disable=not show_progress)
    try:
        with (
            atomic_file(output) as tmp,
            open_writer(tmp, out_format, [*reader.columns, *added], schema) as writer,
        ):
            for records in reader.chunks(chunk_rows):
                texts = [r.get(name) for r in records]
                if context is None:
                    results = matcher.normalize_rows(texts, k)
                else:
                    results = in_context.normalize_in_context(
                        texts, [r.get(context) for r in records], k, mode
                    )
                    report.expanded += sum(
                        bool(res.candidates) and res.candidates[0].expanded_from is not None
                        for res in results
                    )
                rows: list[Record] = [
                    {**r, **_fields(res, k, native, expanding)}
                    for r, res in zip(records, results, strict=True)
                ]
                writer.write(rows)
                report.rows += len(rows)
                report.errors += sum(res.error is not None for res in results)
                report.abstained += sum(res.abstained is not None for res in results)
                bar.update(len(rows))
    finally:
        bar.close()
    logger.info(
        "abbreviations: %s (context column %s, %d rows answered expanded)",
        report.abbreviations, report.context_column, report.expanded,
    )  # fmt: skip
    logger.info(
        "normalized %d rows (%d errors, %d abstained) into %s",
        report.rows, report.errors, report.abstained, output,
    )  # fmt: skip
    return report
