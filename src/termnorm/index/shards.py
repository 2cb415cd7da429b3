"""The shard plan of an index build and the work folder that makes a build resumable.

An index build encodes the KG's distinct term strings, in the order
:func:`pandas.factorize` gives them (first appearance in the term table), in **shards** of
``shard_size`` consecutive strings (:func:`plan_shards`; the last one may be shorter). The
shard is the unit of work of every engine: the encoder sees one shard per call, so its
length-sorted batches, and hence its vectors, are the same whoever encodes the shard (this
process or a Ray worker). The shard size is part of the plan because it decides the batches:
two builds agree bit for bit only with the same shard size.

A build that writes a folder ``OUT`` keeps its finished shards in the work folder
``OUT.shards/`` beside it (:class:`ShardStore`):

``manifest.json``
    what decides the vectors: the KG's content fingerprint, the model (fingerprint, pooling,
    max_length, dimension), the runtime, the device, the batch size and the plan (number of
    strings, a SHA-256 of them in order, shard size, number of shards);
``shard-000000.npy``, ...
    float16 ``[stop - start, d]`` vectors of each finished shard, written as ``.tmp``,
    fsynced and renamed: a shard file that exists is complete.

Opening the store again with the same manifest resumes: only the shards without a file are
encoded. Another manifest (a changed KG, model, runtime...) is refused with
:class:`~termnorm.io.resumable.ResumeError` naming what changed, unless ``overwrite`` (the
shards are then deleted). One build at a time: the store holds
:class:`~termnorm.io.output_lock.OutputLock` on its folder. :meth:`ShardStore.finish`
removes the folder once the index is saved.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from termnorm.index.build_config import DEFAULT_SHARD_SIZE
from termnorm.index.vectors import STORAGE_DTYPE
from termnorm.io.output_lock import OutputLock
from termnorm.io.resumable import ResumeError, job_changes

__all__ = [
    "DEFAULT_SHARD_SIZE",
    "MANIFEST_NAME",
    "Shard",
    "ShardStore",
    "plan_shards",
    "shard_work_dir",
    "texts_digest",
]

logger = logging.getLogger(__name__)

MANIFEST_NAME = "manifest.json"
_KIND = "termnorm-index-shards"
_VERSION = 1
_SHARD = "shard-{:06d}.npy"
_NAMES = {"kg": "KG", "model": "model", "runtime": "runtime", "device": "device",
          "batch_size": "batch size", "plan": "shard plan", "kind": "kind", "version": "version"}  # fmt: skip


@dataclass(frozen=True)
class Shard:
    """Distinct strings ``start``..``stop`` (exclusive) of a build; file number ``index``."""

    index: int
    start: int
    stop: int

    def __len__(self) -> int:
        return self.stop - self.start


def plan_shards(n_texts: int, shard_size: int) -> list[Shard]:
    """``n_texts`` strings cut into consecutive shards of ``shard_size`` (the last shorter)."""
    if shard_size < 1:
        raise ValueError(f"shard size must be at least 1, got {shard_size}")
    return [
        Shard(i, start, min(start + shard_size, n_texts))
        for i, start in enumerate(range(0, n_texts, shard_size))
    ]


def texts_digest(texts: Iterable[str]) -> str:
    """SHA-256 of ``texts`` in order (each length-prefixed, so no separator can collide)."""
    digest = hashlib.sha256()
    for text in texts:
        data = text.encode("utf-8")
        digest.update(len(data).to_bytes(8, "little"))
        digest.update(data)
    return digest.hexdigest()


def shard_work_dir(out: str | Path) -> Path:
    """The work folder of the index folder ``out``: ``OUT.shards`` beside it."""
    out = Path(os.path.abspath(out))
    return out.with_name(out.name + ".shards")


class ShardStore:
    """The work folder of one build (module doc): open (or resume) it, then read and write
    shards; :meth:`finish` after the index is saved, :meth:`close` on failure."""

    def __init__(
        self,
        folder: str | Path,
        manifest: Mapping[str, Any],
        dim: int,
        overwrite: bool = False,
        output: str | Path | None = None,
    ) -> None:
        self.folder = Path(folder)
        self.dim = int(dim)
        self.manifest = {"kind": _KIND, "version": _VERSION, **manifest}
        self.manifest = json.loads(json.dumps(self.manifest, default=str))
        self._lock = OutputLock(self.folder, output or self.folder, option="--out")
        try:
            self._open(overwrite, output or self.folder)
        except BaseException:
            self._lock.release()
            raise

    def _open(self, overwrite: bool, output: str | Path) -> None:
        record = self.folder / MANIFEST_NAME
        if record.is_file():
            recorded = json.loads(record.read_text(encoding="utf-8"))
            changes = job_changes(recorded, self.manifest)
            if changes and not overwrite:
                names = dict.fromkeys(_NAMES.get(c.split(".")[0].split(":")[0], c) for c in changes)
                raise ResumeError(
                    f"{self.folder} holds the shards of an unfinished build of {output} made "
                    f"with another {', '.join(names)} ({'; '.join(changes)}). Run the build "
                    "again as it was to finish it, or pass --overwrite (overwrite=True in the API) to delete "
                    "those shards and start again"
                )
            if changes:
                logger.info("--overwrite: deleting the shards of another build in %s", self.folder)
                for path in self.folder.glob("shard-*.npy*"):
                    path.unlink()
        elif any(p.name.startswith("shard-") for p in self.folder.iterdir()):
            raise ResumeError(
                f"{self.folder} holds shard files but no {MANIFEST_NAME}; delete the folder "
                "and build again"
            )
        for tmp in self.folder.glob("*.tmp"):
            tmp.unlink()
        tmp = record.with_name(record.name + ".tmp")
        tmp.write_text(json.dumps(self.manifest, indent=1) + "\n", encoding="utf-8")
        os.replace(tmp, record)

    def path(self, shard: Shard) -> Path:
        """The file of ``shard``."""
        return self.folder / _SHARD.format(shard.index)

    def has(self, shard: Shard) -> bool:
        """Whether ``shard`` was finished (by this run or an earlier one)."""
        return self.path(shard).is_file()

    def read(self, shard: Shard) -> np.ndarray:
        """The stored float16 vectors of ``shard``; a file of another shape is refused."""
        path = self.path(shard)
        try:
            vectors = np.load(path)
        except (OSError, ValueError, EOFError) as exc:
            raise ResumeError(
                f"{path} is damaged ({exc}); delete it and run the build again"
            ) from exc
        if vectors.shape != (len(shard), self.dim) or vectors.dtype != STORAGE_DTYPE:
            raise ResumeError(
                f"{path} holds {vectors.dtype} {vectors.shape}, not float16 "
                f"({len(shard)}, {self.dim}); delete it and run the build again"
            )
        return vectors

    def write(self, shard: Shard, vectors: np.ndarray) -> None:
        """Store ``shard``'s float16 vectors atomically (written, fsynced, renamed)."""
        path = self.path(shard)
        tmp = path.with_name(path.name + ".tmp")
        with tmp.open("wb") as f:
            np.save(f, np.ascontiguousarray(vectors, dtype=STORAGE_DTYPE))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)

    def close(self) -> None:
        """Release the lock, keeping the finished shards for a later run."""
        self._lock.release()

    def finish(self) -> None:
        """Delete the work folder (the index is saved) and release the lock."""
        for path in self.folder.iterdir():
            if path.name != self._lock.path.name:
                path.unlink()
        self._lock.release()
        shutil.rmtree(self.folder, ignore_errors=True)
