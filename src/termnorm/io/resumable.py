"""A table written in numbered parts with a progress record, so an interrupted job resumes.

While a job writes ``OUTPUT`` it keeps a work folder beside it, ``OUTPUT.parts/``:

``progress.json``
    the job's identity (what the caller says decides the output: input file, options,
    index...) and the row count (and the caller's counts) of every finished part, in order;
``part-000000.EXT``, ``part-000001.EXT``, ...
    the finished parts (CSV/TSV parts have no header line).

A part is written as ``part-N.EXT.tmp``, renamed, and only then recorded, so after a kill
(even ``kill -9``) the record names exactly the complete parts. Opening the same output again
with the same job resumes after the recorded rows (anything unrecorded in the folder is
deleted); with another job it is refused with :class:`ResumeError` naming what changed, unless
``restart=True`` (the work folder is then emptied). :meth:`ResumableOutput.finish` writes the
parts into one file inside the work folder, renames it onto ``OUTPUT`` and removes the work
folder: a finished job leaves only ``OUTPUT``, an interrupted one only ``OUTPUT`` (as it was
before, if it existed) and the work folder. A folder of that name without a termnorm progress
record is never touched.

A part is whatever the caller writes at the path it is given (:meth:`ResumableParts.commit_part`):
a table part (:class:`ResumableOutput`, the normalizer's batch files), a text part that
:meth:`ResumableParts.finish_concat` joins into one file, or a folder of files that
:meth:`ResumableParts.finish_into_folder` moves into the output folder (one file per
document: a later part's file of the same name wins, as when written in one pass; a kill while
files are moved leaves the rest in their parts, and the run resumed moves them).

One run at a time: the job holds an exclusive lock on ``OUTPUT.parts/.termnorm.lock``
(:class:`~termnorm.io.output_lock.OutputLock`) from before it reads the progress record until
:meth:`ResumableOutput.finish` or :meth:`ResumableOutput.close`; a second run on the same
output fails at once with :class:`~termnorm.io.output_lock.OutputBusyError` ("another run is
writing this output") instead of deleting the first one's parts.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from termnorm.errors import ResumeError
from termnorm.io.output_lock import LOCK_NAME, OutputLock
from termnorm.io.tables import Record, TableFormat, atomic_file, open_writer

__all__ = [
    "PROGRESS_NAME",
    "ResumableOutput",
    "ResumableParts",
    "ResumeError",
    "job_changes",
    "work_dir",
]

logger = logging.getLogger(__name__)

PROGRESS_NAME = "progress.json"
_KIND = "termnorm-parts"
_VERSION = 1


def work_dir(output: str | Path) -> Path:
    """The work folder of ``output``: ``OUTPUT.parts`` beside it."""
    output = Path(output)
    return output.with_name(output.name + ".parts")


def _canonical(job: Mapping[str, Any]) -> dict[str, Any]:
    """``job`` as it reads back from JSON (tuples → lists, keys → str)."""
    return dict(json.loads(json.dumps(job, default=str)))


def job_changes(recorded: Mapping[str, Any], current: Mapping[str, Any], at: str = "") -> list[str]:
    """``"key: before → now"`` for each value that differs (nested keys dotted)."""
    changes = []
    for key in dict.fromkeys([*recorded, *current]):
        before, now = recorded.get(key), current.get(key)
        if isinstance(before, dict) and isinstance(now, dict):
            changes += job_changes(before, now, f"{at}{key}.")
        elif before != now:
            changes.append(f"{at}{key}: {json.dumps(before)} → {json.dumps(now)}")
    return changes


class ResumableParts:
    """Numbered parts of ``output`` for ``job``, resuming a matching unfinished job.

    Args:
        output: the final file (or folder, :meth:`finish_into_folder`).
        job: JSON-ready description of everything that decides the output; compared key by
            key with the record of an unfinished job.
        ext: the parts' suffix (``""`` for folder parts).
        restart: drop an unfinished job's parts instead of resuming or refusing it.
        option: the command's name for the output in messages (``--output``, ``--out``).

    Holds the output's lock from construction to :meth:`finish_concat`,
    :meth:`finish_into_folder` or :meth:`close` (also a context manager); raises
    :class:`~termnorm.io.output_lock.OutputBusyError` when another run holds it.
    """

    def __init__(
        self,
        output: str | Path,
        job: Mapping[str, Any],
        ext: str,
        restart: bool = False,
        *,
        option: str = "--output",
    ) -> None:
        self.output = Path(output)
        self.option = option
        self.job = _canonical(job)
        self.work = work_dir(self.output)
        self.parts: list[dict[str, int]] = []
        self._ext = ext
        self._recorded()  # a folder that is not ours is refused before anything is created
        self._lock = OutputLock(self.work, self.output, option)
        try:
            recorded = self._recorded()  # again: the last holder may have changed it
            if recorded is None:
                self._record()
            else:
                self._reopen(recorded, restart)
        except BaseException:
            self._lock.release()
            raise

    def close(self) -> None:
        """Release the output's lock (after a finish, or when giving up); idempotent."""
        self._lock.release()

    def __enter__(self) -> ResumableParts:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def rows_done(self) -> int:
        """Rows in the finished parts (the input rows to skip)."""
        return sum(p["rows"] for p in self.parts)

    def totals(self) -> dict[str, int]:
        """The finished parts' counts (``rows`` and the ``stats`` given with each), summed."""
        total: dict[str, int] = {"rows": 0}
        for part in self.parts:
            for key, value in part.items():
                total[key] = total.get(key, 0) + value
        return total

    def _part(self, n: int) -> Path:
        return self.work / f"part-{n:06d}{self._ext}"

    def _record(self) -> None:
        payload = {"kind": _KIND, "version": _VERSION, "job": self.job, "parts": self.parts}
        with atomic_file(self.work / PROGRESS_NAME) as tmp:
            tmp.write_text(json.dumps(payload, indent=1, ensure_ascii=False) + "\n", "utf-8")

    def _recorded(self) -> dict[str, Any] | None:
        """The work folder's progress record; ``None`` when there is no folder or only a lock
        file in it; :class:`ResumeError` when it holds anything else without a record."""
        if not self.work.is_dir() or {p.name for p in self.work.iterdir()} <= {LOCK_NAME}:
            if self.work.exists() and not self.work.is_dir():
                raise ResumeError(f"{self.work} is a file; move or delete it")
            return None
        try:
            recorded = json.loads((self.work / PROGRESS_NAME).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            recorded = None
        if not isinstance(recorded, dict) or recorded.get("kind") != _KIND:
            raise ResumeError(
                f"{self.work} exists and is not a termnorm work folder (no readable "
                f"{PROGRESS_NAME}); move or delete it, or choose another {self.option}"
            )
        return recorded

    def _clear(self) -> None:
        """Delete everything in the work folder but the lock file."""
        for path in self.work.iterdir():
            if path.name != LOCK_NAME:
                _remove(path)

    def _reopen(self, recorded: dict[str, Any], restart: bool) -> None:
        if restart:
            logger.info("--restart: dropping the unfinished job in %s", self.work)
            self._clear()
            self._record()
            return
        changes = job_changes(recorded.get("job", {}), self.job)
        if changes:
            raise ResumeError(
                f"{self.work} holds an unfinished job with other settings ({'; '.join(changes)}). "
                "Run it again as it was to resume it, or give --restart (restart=True in the "
                "API) to start over"
            )
        self.parts = [{str(k): int(v) for k, v in p.items()} for p in recorded.get("parts", [])]
        kept = {PROGRESS_NAME, LOCK_NAME, *(self._part(i).name for i in range(len(self.parts)))}
        for path in self.work.iterdir():
            if path.name not in kept:  # a part written but not recorded, or a .tmp
                _remove(path)
        missing = [self._part(i).name for i in range(len(self.parts)) if not self._part(i).exists()]
        if missing:
            raise ResumeError(
                f"{self.work}: recorded parts are missing ({', '.join(missing[:3])}); give "
                "--restart to start over"
            )
        logger.info(
            "resuming %s after %d rows (%d parts)", self.output, self.rows_done, len(self.parts)
        )

    def commit_part(
        self, write: Callable[[Path], None], rows: int, stats: Mapping[str, int] | None = None
    ) -> None:
        """Make the next part: ``write(path)`` writes it (a file, or a folder) at a temporary
        path, which is then renamed and recorded with ``rows`` (the input rows it holds, what a
        resumed run skips) and ``stats`` (counts the caller wants back, see :meth:`totals`)."""
        part = self._part(len(self.parts))
        tmp = part.with_name(part.name + ".tmp")
        if tmp.exists():
            _remove(tmp)
        write(tmp)
        os.replace(tmp, part)
        self.parts.append({"rows": rows, **(stats or {})})
        self._record()

    def finish_concat(self, header: Callable[[Path], None] | None = None) -> None:
        """Write ``header(path)`` (if given), then the parts' bytes in order, into ``output``
        (replacing it); remove the work folder and release the lock."""
        merged = self.work / f"merged{self._ext}.tmp"
        if header is not None:
            header(merged)
        with open(merged, "ab") as out:
            for n in range(len(self.parts)):
                with open(self._part(n), "rb") as part:
                    shutil.copyfileobj(part, out)
        self._replace_output(merged)

    def finish_into_folder(self) -> None:
        """Move the files of the folder parts, in order, into the folder ``output`` (created
        if needed; its other files are left alone); remove the work folder and release the
        lock."""
        self.output.mkdir(parents=True, exist_ok=True)
        for n in range(len(self.parts)):
            for path in sorted(self._part(n).iterdir()):
                os.replace(path, self.output / path.name)
        shutil.rmtree(self.work)
        self.close()

    def _replace_output(self, merged: Path) -> None:
        os.replace(merged, self.output)
        shutil.rmtree(self.work)
        self.close()


class ResumableOutput(ResumableParts):
    """Writes the table ``output`` part by part for ``job`` (:class:`ResumableParts`).

    Args:
        output: the final file.
        fmt: its format.
        columns: its columns, in order.
        schema: for Parquet, the full Arrow schema (the parts must share it).
        job: as :class:`ResumableParts`.
        restart: as :class:`ResumableParts`.
    """

    def __init__(
        self,
        output: str | Path,
        fmt: TableFormat,
        columns: Sequence[str],
        schema: pa.Schema | None,
        job: Mapping[str, Any],
        restart: bool = False,
    ) -> None:
        self.fmt = fmt
        self.columns = list(columns)
        self.schema = schema
        super().__init__(output, job, Path(output).suffix or f".{fmt.value}", restart)

    def write_part(self, records: list[Record], stats: Mapping[str, int] | None = None) -> None:
        """Write ``records`` as the next part and record it with its row count and ``stats``
        (counts the caller wants back after a resume, see :meth:`totals`)."""

        def write(tmp: Path) -> None:
            with open_writer(tmp, self.fmt, self.columns, self.schema, header=False) as writer:
                writer.write(records)

        self.commit_part(write, len(records), stats)

    def finish(self) -> None:
        """Write the parts into ``output`` (replacing it), remove the work folder and release
        the lock."""
        if self.fmt is TableFormat.PARQUET and self.parts:
            merged = self.work / f"merged{self._ext}.tmp"
            schema = self.schema or pq.read_schema(self._part(0))
            with pq.ParquetWriter(merged, schema) as writer:
                for n in range(len(self.parts)):
                    writer.write_table(pq.read_table(self._part(n), schema=schema))
            self._replace_output(merged)
            return
        # an empty Parquet file, or the CSV/TSV header and the text parts after it
        self.finish_concat(
            lambda path: open_writer(path, self.fmt, self.columns, self.schema).close()
        )


def _remove(path: Path) -> None:
    """Delete the file or folder ``path``."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink()
