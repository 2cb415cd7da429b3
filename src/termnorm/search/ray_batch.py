"""Normalize a Parquet file (or a folder of them) on Ray: one output part per input partition.

The input is cut into partitions of ``chunk_rows`` rows (in file order; a folder's
``*.parquet`` files in name order), numbered from 0. Ray Data maps the partitions through a
pool of ``workers`` actors (:class:`ray.data.ActorPoolStrategy`); each actor builds its
matcher once, from ``matcher_factory`` (loading the encoder and the index itself), then for
each partition reads its rows, normalizes them exactly as the local engine does a chunk
(:func:`~termnorm.search.batch.normalize_records`) and writes ``OUTPUT/part-NNNNNN.parquet``
(written as ``.tmp``, then renamed: a part that exists is complete). Reading the parts in
name order gives the local engine's output row for row.

``OUTPUT/_termnorm_job.json`` records the job (input files with sizes and modification
times, options, the caller's ``settings``). A re-run of the same job skips the parts that
exist, so after a kill it finishes with every input row exactly once; another job is refused
with :class:`~termnorm.io.resumable.ResumeError` naming what changed (``restart=True`` deletes
the parts and starts over). A non-empty ``OUTPUT`` without that record is refused. The driver
holds the lock ``OUTPUT/.termnorm.lock`` (:class:`~termnorm.io.output_lock.OutputLock`) for the
whole run: a second run on the same output fails at once ("another run is writing this
output").

On a cluster (``ray_address``, e.g. ``ray://head:10001`` or ``auto``), every node must see the
input, the output folder and the index at the same paths (a shared file system), and
termnorm must be installed on each.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from tqdm.auto import tqdm

from termnorm.engines import RayWorkerError, import_ray, map_on_actors, ray_session
from termnorm.errors import InputFormatError, TermnormError
from termnorm.io.output_lock import LOCK_NAME, OutputLock
from termnorm.io.resumable import ResumeError, job_changes
from termnorm.io.tables import TableFormat, open_reader, open_writer
from termnorm.search.batch import (
    BatchReport,
    ChunkCounts,
    RowSpec,
    input_identity,
    normalize_records,
    output_schema,
    row_spec,
)
from termnorm.search.candidate import RowMatcher
from termnorm.search.file_spec import NormalizeFileSpec
from termnorm.search.identity import canonical

__all__ = [
    "JOB_NAME",
    "Partition",
    "RayWorkerError",
    "import_ray",
    "normalize_file_ray",
    "plan_partitions",
]

logger = logging.getLogger(__name__)

JOB_NAME = "_termnorm_job.json"
_PART = "part-{:06d}.parquet"
_COUNTS = b"termnorm.counts"


@dataclass(frozen=True)
class Partition:
    """Rows ``start``..``stop`` (exclusive) of the Parquet file ``path``; output part ``index``."""

    index: int
    path: str
    start: int
    stop: int


def _input_files(input: Path) -> list[Path]:
    if input.is_dir():
        files = sorted(input.glob("*.parquet"))
        if not files:
            raise InputFormatError(input, None, "a folder with no *.parquet file")
        return files
    if input.suffix.lower() not in (".parquet", ".pq"):
        raise InputFormatError(
            input,
            None,
            "--engine ray reads Parquet (a file or a folder of *.parquet files); convert the "
            "file, or use the local engine",
        )
    if not input.is_file():
        raise InputFormatError(input, None, "no such file")
    return [input]


def plan_partitions(input: str | Path, rows: int) -> list[Partition]:
    """The partitions of ``input`` (a Parquet file or a folder of them), ``rows`` rows each
    (a file's last one may be shorter), numbered in file and row order."""
    if rows < 1:
        raise ValueError(f"rows per partition must be at least 1, got {rows}")
    parts: list[Partition] = []
    for path in _input_files(Path(input)):
        total = open_reader(path).num_rows
        for start in range(0, total, rows):
            parts.append(Partition(len(parts), str(path), start, min(start + rows, total)))
    return parts


class _PartitionWorker:
    """A Ray Data callable class: builds its matcher once, then writes one part per
    partition it is given (a batch of partition rows) and returns their counts."""

    def __init__(
        self,
        matcher_factory: Callable[[], RowMatcher],
        spec: RowSpec,
        output: str,
        columns: list[str],
        schema: pa.Schema,
    ) -> None:
        # an error building the matcher (a missing index...) is raised by the first call:
        # Ray reports a failed constructor as a bare ActorDiedError, a failed call with its cause
        self.error: Exception | None = None
        try:
            self.matcher = matcher_factory()
        except (TermnormError, ValueError, OSError) as exc:
            self.error = exc
        self.spec, self.output = spec, Path(output)
        self.columns, self.schema = columns, schema

    def __call__(self, batch: dict[str, Any]) -> dict[str, list[Any]]:
        done: dict[str, list[Any]] = {"index": [], **{k: [] for k in ChunkCounts().as_dict()}}
        done["error"] = []
        for index, path, start, stop in zip(
            batch["index"], batch["path"], batch["start"], batch["stop"], strict=True
        ):
            try:
                counts = self._part(int(index), str(path), int(start), int(stop))
            except (TermnormError, ValueError, OSError) as exc:
                # Ray hands the driver a wrapper without the cause: send the message itself
                counts, error = ChunkCounts(), f"{type(exc).__name__}: {exc}"
            else:
                error = ""
            done["index"].append(int(index))
            done["error"].append(error)
            for key, value in counts.as_dict().items():
                done[key].append(value)
        return done

    def _part(self, index: int, path: str, start: int, stop: int) -> ChunkCounts:
        """Normalize one partition into its part file; its counts."""
        if self.error is not None:
            raise self.error
        records = next(open_reader(path).chunks(stop - start, skip=start), [])
        rows, counts = normalize_records(self.matcher, records, self.spec)
        part = self.output / _PART.format(index)
        tmp = part.with_name(part.name + ".tmp")
        schema = self.schema.with_metadata({_COUNTS: json.dumps(counts.as_dict())})
        with open_writer(tmp, TableFormat.PARQUET, self.columns, schema) as writer:
            writer.write(rows)
        os.replace(tmp, part)
        return counts


def _open_output(output: Path, job: dict[str, Any], restart: bool) -> None:
    """Create ``output`` with its job record, or check (or, ``restart``, clear) an existing
    one; unfinished ``.tmp`` parts are deleted."""
    record = output / JOB_NAME
    if {p.name for p in output.iterdir()} - {LOCK_NAME} and not record.is_file():
        raise ResumeError(
            f"{output} is a non-empty folder without {JOB_NAME} (not a termnorm output); "
            "choose another --output"
        )
    if record.is_file():
        recorded = json.loads(record.read_text(encoding="utf-8"))
        changes = job_changes(recorded, job)
        if restart:
            logger.info("--restart: deleting the parts in %s", output)
            for part in output.glob("part-*.parquet*"):
                part.unlink()
        elif changes:
            raise ResumeError(
                f"{output} holds parts of a job with other settings ({'; '.join(changes)}). "
                "Run it again as it was to finish it, or give --restart (restart=True in the "
                "API) to start over"
            )
    output.mkdir(parents=True, exist_ok=True)
    for tmp in output.glob("*.tmp"):
        tmp.unlink()
    tmp_record = record.with_name(record.name + ".tmp")
    tmp_record.write_text(json.dumps(job, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp_record, record)


def normalize_file_ray(
    matcher_factory: Callable[[], RowMatcher],
    job: NormalizeFileSpec,
    settings: Mapping[str, Any] | None = None,
    multi: bool = False,
) -> BatchReport:
    """Normalize the rows ``job.rows`` asks for of the Parquet ``job.input`` into the folder
    ``job.output`` on Ray (see the module docstring), with ``job.workers`` actors (on the
    cluster at ``job.ray_address`` when given, else a local Ray); ``settings``: what built the
    matcher, recorded as :func:`~termnorm.search.batch.normalize_file` records it; ``multi``:
    the factory's matcher gives multi-code answers (adds their columns).

    ``matcher_factory`` is called once in each actor (it must pickle: Ray ships it). Raises
    :class:`~termnorm.errors.MissingExtraError` without ``termnorm[ray]``.
    """
    ray = import_ray()
    input, output, chunk_rows, workers = job.input, job.output, job.chunk_rows, job.workers
    if output.suffix.lower() in (".csv", ".tsv", ".jsonl", ".parquet", ".pq"):
        raise ValueError(
            f"--output {output} looks like a file; --engine ray writes a folder of Parquet "
            f"parts, e.g. --output {output.with_suffix('')}"
        )
    partitions = plan_partitions(input, chunk_rows)
    first = open_reader(partitions[0].path if partitions else _input_files(input)[0])
    spec = row_spec(first, job.rows, TableFormat.PARQUET, multi)
    schema = output_schema(first.schema, spec)
    assert schema is not None  # Parquet input has a schema
    record = {
        "input": [input_identity(Path(f)) for f in dict.fromkeys(p.path for p in partitions)],
        "chunk_rows": chunk_rows,
        **spec.record(),
        "settings": dict(settings or {}),
    }
    record = canonical(record)
    if output.exists() and not output.is_dir():
        raise ValueError(f"--output {output} is a file; --engine ray writes a folder of parts")
    lock = OutputLock(output, output)  # the driver holds it for the whole run
    try:
        _open_output(output, record, job.restart)
        todo = [p for p in partitions if not (output / _PART.format(p.index)).is_file()]
        report = spec.report(input, output, skipped_parts=len(partitions) - len(todo))
        report.resumed_from = sum(p.stop - p.start for p in partitions) - sum(
            p.stop - p.start for p in todo
        )
        logger.info(
            "%d partitions of %d rows: %d to do, %d finished earlier",
            len(partitions),
            chunk_rows,
            len(todo),
            report.skipped_parts,
        )
        total = sum(p.stop - p.start for p in partitions)
        bar = tqdm(
            total=total,
            initial=report.resumed_from,
            desc=f"normalizing on Ray ({workers} workers)",
            unit="row",
            disable=not job.show_progress,
        )
        columns = [*first.columns, *spec.added]
        try:
            if todo:
                with ray_session(ray, job.ray_address, workers):
                    worker = (matcher_factory, spec, str(output), columns, schema)
                    _run(ray, todo, worker, workers, report, bar)
        finally:
            bar.close()
        totals = _part_counts(output, len(partitions))
        report.rows, report.errors = totals.rows, totals.errors
        report.abstained, report.expanded = totals.abstained, totals.expanded
    finally:
        lock.release()
    return report


def _run(
    ray: Any,
    todo: list[Partition],
    worker: tuple[Any, ...],
    workers: int,
    report: BatchReport,
    bar: Any,
) -> None:
    """Map ``todo`` through ``workers`` :class:`_PartitionWorker` actors (``worker``: their
    constructor's arguments), counting each finished part into ``report`` and ``bar``."""
    items = [asdict(p) for p in todo]
    for done in map_on_actors(ray, items, _PartitionWorker, worker, workers):
        if done["error"]:
            raise RayWorkerError(f"partition {done['index']}: {done['error']}")
        report.parts += 1
        bar.update(int(done["rows"]))


def _part_counts(output: Path, parts: int) -> ChunkCounts:
    """The counts of all the output's parts (earlier runs' included), from each part's
    metadata."""
    total = ChunkCounts()
    for i in range(parts):
        path = output / _PART.format(i)
        if path.is_file():
            meta = pq.read_schema(path).metadata or {}
            for key, value in json.loads(meta.get(_COUNTS, b"{}")).items():
                setattr(total, key, getattr(total, key) + int(value))
    return total
