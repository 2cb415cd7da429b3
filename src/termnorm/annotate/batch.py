"""Annotate a file or a folder into ``--out`` as a resumable batch job, exactly once.

The documents of the source (:func:`~termnorm.annotate.formats.plan_inputs`, in order) are
annotated in chunks of ``chunk_docs``; each chunk is rendered (:func:`annotate_chunk`: the
same function on both engines) and committed as one part of
:class:`~termnorm.io.resumable.ResumableParts` in ``OUT.parts/`` beside the output, with its
document count and its counts (annotations, refused). A part is written under a temporary
name, renamed, and only then recorded, so after a kill (``kill -9`` too) the same command
continues after the last recorded chunk, skipping the finished documents without reading them,
and the output holds every document exactly once, in order:

- ``jsonl``: one line per annotation, or one ``{"doc_id", "error"}`` line for a refused
  document (:func:`~termnorm.annotate.formats.jsonl_rows`); the parts joined into ``OUT``;
- ``pubtator``: the documents' PubTator blocks, joined into ``OUT``; a refused document is
  logged (a warning naming it) and counted;
- ``brat``: each part is a folder of ``STEM.txt`` + ``STEM.ann`` per document; the finished
  run moves the files into the folder ``OUT`` (refused documents as for PubTator).

``OUT`` appears (or changes) only when the run ends. The job is recorded: the source
(:func:`source_identity`), the output format, the JSON Lines fields, the annotation settings
(:class:`~termnorm.annotate.spec.AnnotateSpec`), its pipeline spec and the matcher's identity; a run over another
job is refused with :class:`~termnorm.io.resumable.ResumeError` naming what changed
(``restart=True`` starts over). One run per output (the lock of ``OUT.parts/``).

``engine="ray"`` maps the chunks over ``workers`` Ray actors (each builds its annotator once,
from the spec: the index must be a folder); the driver reads the documents and commits the
rendered chunks in order, so the output and the resume are the local engine's
(:mod:`termnorm.annotate.ray_batch`); the written scores are rounded to 6 decimals
(:func:`~termnorm.annotate.formats.jsonl_rows`), below which processes differ (an actor has one
CPU, and torch sums floats in another order over another number of threads).
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tqdm.auto import tqdm

from termnorm.annotate.chunks import DEFAULT_CHUNK_DOCS, annotate_chunk, commit_chunk
from termnorm.annotate.formats import (
    InputDocument,
    OutputFormat,
    plan_inputs,
    source_is_text,
)
from termnorm.annotate.pipeline import Annotator
from termnorm.engines import Engine
from termnorm.io.resumable import ResumableParts
from termnorm.search.batch import input_identity

if TYPE_CHECKING:
    from termnorm.annotate.spec import AnnotateSpec
    from termnorm.search.build import SynonymNotice

__all__ = ["AnnotateReport", "annotate_file", "check_out", "source_identity"]

logger = logging.getLogger(__name__)


@dataclass
class AnnotateReport:
    """What :func:`annotate_file` did (the counts cover the documents of earlier runs too)."""

    source: str
    output: Path
    format: str
    engine: str
    documents: int = 0
    annotations: int = 0
    refused: int = 0
    resumed_from: int = 0
    """Documents already written by an interrupted run this one resumed (0: a fresh run)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (the fields, the output as a string)."""
        return {**dataclasses.asdict(self), "output": str(self.output)}


def source_identity(source: str) -> dict[str, Any]:
    """What a resumed job compares of its source: a file's path, size and modification time;
    a folder's path, number of ``.txt`` files and a digest of their names, sizes and
    modification times; a literal text's digest."""
    if source_is_text(source):
        return {"text_sha256": hashlib.sha256(source.encode("utf-8")).hexdigest()[:16]}
    path = Path(source)
    if not path.is_dir():
        return input_identity(path)
    files = sorted(p for p in path.iterdir() if p.suffix.lower() == ".txt" and p.is_file())
    digest = hashlib.sha256()
    for file in files:
        stat = file.stat()
        digest.update(f"{file.name}\t{stat.st_size}\t{stat.st_mtime_ns}\n".encode())
    return {"path": str(path.resolve()), "files": len(files), "digest": digest.hexdigest()[:16]}


def check_out(source: str, out: Path, fmt: OutputFormat) -> None:
    """:class:`ValueError` when ``out`` cannot take ``fmt``'s output: a folder for a file
    format, a file for BRAT, or the source file itself."""
    if fmt is OutputFormat.BRAT:
        if out.exists() and not out.is_dir():
            raise ValueError(f"--out {out} is a file; --format brat writes a folder")
        return
    if out.is_dir():
        raise ValueError(
            f"--out {out} is a folder; --format {fmt.value} writes a file, e.g. "
            f"{out / ('annotations.' + fmt.value)}"
        )
    if not source_is_text(source) and out.exists() and out.samefile(source):
        raise ValueError(f"--out {out} is the input file; writing there would overwrite it")


def annotate_file(
    spec: AnnotateSpec,
    source: str,
    out: str | Path,
    *,
    fmt: OutputFormat = OutputFormat.JSONL,
    id_field: str = "id",
    text_field: str = "text",
    chunk_docs: int = DEFAULT_CHUNK_DOCS,
    restart: bool = False,
    show_progress: bool = True,
    engine: Engine | str = Engine.LOCAL,
    workers: int = 1,
    address: str | None = None,
    notice: SynonymNotice | None = None,
) -> AnnotateReport:
    """Annotate the documents of ``source`` (a text, a file or a folder, as
    :func:`~termnorm.annotate.formats.read_inputs` reads it) into ``out`` as ``spec`` says
    (module doc). ``engine="ray"`` runs ``workers`` Ray actors (on the cluster at
    ``address``). Raises :class:`~termnorm.io.resumable.ResumeError` for an unfinished job with
    other settings, :class:`~termnorm.io.output_lock.OutputBusyError` while another run writes
    ``out``, :class:`ValueError` for an ``out`` that cannot take ``fmt``."""
    out, engine = Path(out), Engine(engine)
    if chunk_docs < 1:
        raise ValueError(f"chunk_docs must be at least 1, got {chunk_docs}")
    check_out(source, out, fmt)
    readers = plan_inputs(source, id_field=id_field, text_field=text_field)
    job: dict[str, Any] = {
        "engine": engine.value,
        "input": source_identity(source),
        "format": fmt.value,
        "id_field": id_field,
        "text_field": text_field,
        **spec.record(),
    }
    annotator: Annotator | None = None
    if engine is Engine.RAY:
        from termnorm.annotate.ray_batch import ray_job

        search, job["settings"] = ray_job(spec.search)
        spec = spec.replace(search=search)
    else:
        from termnorm.annotate.detectors import build_annotator
        from termnorm.search.build import build

        annotator = build_annotator(spec, build_search=partial(build, notice=notice))
        job["settings"] = annotator.search.resolved().to_dict()
        job["matcher"] = annotator.matcher.identity()
    ext = "" if fmt is OutputFormat.BRAT else out.suffix
    parts = ResumableParts(out, job, ext, restart, option="--out")
    report = AnnotateReport(source, out, fmt.value, engine.value, resumed_from=parts.rows_done)
    if parts.rows_done:
        logger.info("resuming after %d of %d documents", parts.rows_done, len(readers))
    workers_said = f" on Ray ({workers} workers)" if engine is Engine.RAY else ""
    bar = tqdm(
        total=len(readers),
        initial=parts.rows_done,
        desc=f"annotating{workers_said}",
        unit="doc",
        disable=not show_progress,
    )
    try:
        if annotator is None:
            from termnorm.annotate.ray_batch import annotate_on_ray

            annotate_on_ray((spec, fmt), readers, chunk_docs, workers, address, parts, bar)
        else:
            _annotate_here(annotator, readers, fmt, chunk_docs, parts, bar)
        if fmt is OutputFormat.BRAT:
            parts.finish_into_folder()
        else:
            parts.finish_concat()
    finally:
        parts.close()
        bar.close()
    totals = parts.totals()
    report.documents, report.annotations = totals["rows"], totals.get("annotations", 0)
    report.refused = totals.get("refused", 0)
    return report


def _annotate_here(
    annotator: Annotator,
    readers: Sequence[Callable[[], InputDocument]],
    fmt: OutputFormat,
    chunk_docs: int,
    parts: ResumableParts,
    bar: Any,
) -> None:
    """The local engine: the documents after ``parts.rows_done``, chunk by chunk, in order."""
    for start in range(parts.rows_done, len(readers), chunk_docs):
        docs = [read() for read in readers[start : start + chunk_docs]]
        commit_chunk(parts, annotate_chunk(annotator, docs, fmt), fmt)
        bar.update(len(docs))
