"""One chunk of documents annotated and rendered, as both engines of a batch job write it
(:mod:`termnorm.annotate.batch`, :mod:`termnorm.annotate.ray_batch`), and the stdout stream
of ``termnorm annotate``.

:func:`annotate_chunk` renders the documents in order: JSON Lines (one line per annotation, a
``{"doc_id", "error"}`` line per refused document, a ``{"doc_id", "annotations": 0}`` line
per document with nothing found), PubTator blocks, or BRAT files (``STEM.txt``
and ``STEM.ann`` per document); a document that could not be read keeps its read error, one
the annotator refuses its refusal (:class:`~termnorm.annotate.pipeline.DocumentError`), and
the others go on. :func:`commit_chunk` makes a rendered chunk the next part of a resumable
output.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from termnorm.annotate.formats import (
    InputDocument,
    OutputFormat,
    brat_ann,
    brat_file_stem,
    jsonl_rows,
    pubtator_lines,
)
from termnorm.annotate.pipeline import Annotator, DocumentAnnotations

if TYPE_CHECKING:
    from termnorm.io.resumable import ResumableParts

__all__ = [
    "DEFAULT_CHUNK_DOCS",
    "DocumentCounts",
    "RenderedChunk",
    "annotate_chunk",
    "commit_chunk",
]

logger = logging.getLogger(__name__)

DEFAULT_CHUNK_DOCS = 256
"""Documents per committed chunk (what a kill can lose, and what a Ray actor gets at once)."""


@dataclass
class DocumentCounts:
    """Counts of one chunk (or a whole run): documents, annotations, refused documents."""

    documents: int = 0
    annotations: int = 0
    refused: int = 0

    def as_dict(self) -> dict[str, int]:
        """The counts by name (what a part's record keeps)."""
        return dataclasses.asdict(self)


class RenderedChunk(NamedTuple):
    """A chunk of documents as written: ``text`` (JSON Lines, PubTator) or ``files`` (BRAT:
    file name → content), its counts and the refusal messages of its refused documents."""

    text: str
    files: dict[str, str]
    counts: DocumentCounts
    refused: list[str]

    def to_json(self) -> str:
        """This chunk as JSON text (how a Ray actor sends it to the driver)."""
        return json.dumps([self.text, self.files, self.counts.as_dict(), self.refused])

    @classmethod
    def from_json(cls, data: str) -> RenderedChunk:
        """The chunk of :meth:`to_json`."""
        text, files, counts, refused = json.loads(data)
        return cls(text, files, DocumentCounts(**counts), refused)


def annotate_chunk(
    annotator: Annotator, docs: Sequence[InputDocument], fmt: OutputFormat
) -> RenderedChunk:
    """``docs`` annotated and rendered in ``fmt``, in order; a document that could not be read
    keeps its read error, one refused by the annotator its refusal, and the others go on."""
    readable = [(d.doc_id, d.text, d.lang) for d in docs if d.text is not None]
    results = iter(annotator.annotate_many(readable))
    lines: list[str] = []
    files: dict[str, str] = {}
    counts, refused = DocumentCounts(documents=len(docs)), []
    for doc in docs:
        done = DocumentAnnotations(doc.doc_id, [], doc.error) if doc.text is None else next(results)
        annotations, error = done.annotations, done.error
        if error is not None:
            counts.refused += 1
            refused.append(error)
        counts.annotations += len(annotations)
        if fmt is OutputFormat.JSONL:
            rows = jsonl_rows(doc.doc_id, annotations, error, done.warning)
            lines += [json.dumps(row, ensure_ascii=False) for row in rows]
        elif error is None and doc.text is not None and fmt is OutputFormat.PUBTATOR:
            lines += pubtator_lines(doc.doc_id, doc.text, annotations)
        elif error is None and doc.text is not None:
            stem = brat_file_stem(doc.doc_id)
            files[f"{stem}.txt"], files[f"{stem}.ann"] = doc.text, brat_ann(annotations)
    text = "".join(f"{line}\n" for line in lines)
    return RenderedChunk(text, files, counts, refused)


def _write_part(chunk: RenderedChunk, fmt: OutputFormat) -> Callable[[Path], None]:
    """The writer of ``chunk``'s part at a given path (a file, or a folder for BRAT)."""

    def write(path: Path) -> None:
        if fmt is not OutputFormat.BRAT:
            path.write_bytes(chunk.text.encode("utf-8"))
            return
        path.mkdir()
        for name, content in chunk.files.items():
            (path / name).write_bytes(content.encode("utf-8"))

    return write


def commit_chunk(out: ResumableParts, chunk: RenderedChunk, fmt: OutputFormat) -> None:
    """Commit ``chunk`` as the next part of ``out`` (its refusals logged as warnings for the
    formats that have no row for them)."""
    if fmt is not OutputFormat.JSONL:
        for error in chunk.refused:
            logger.warning("refused: %s", error)
    counts = chunk.counts.as_dict()
    out.commit_part(_write_part(chunk, fmt), counts.pop("documents"), counts)
