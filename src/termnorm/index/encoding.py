"""Term strings → the float16 term matrix of an index, one shard at a time, by any engine.

One path for every build: the distinct strings are cut into shards
(:func:`~termnorm.index.shards.plan_shards`); shards a work folder already holds
(:class:`~termnorm.index.shards.ShardStore`) are read back, the others are handed to a
:class:`ShardEngine` — :class:`LocalEngine` (this process) or
:class:`~termnorm.index.ray_encoding.RayEngine` (Ray workers) — which yields each shard's
float16 vectors as it is done, in any order. Each is stored (when there is a work folder),
scattered into the rows of the terms that use its strings, and dropped: no float32 matrix of
all terms exists, and repeated strings are encoded once. One progress bar covers the whole
build (distinct strings, shards done / total in its postfix, ETA); it moves with each encoder
batch of the local engine (a 16,384-string shard takes minutes on a busy CPU) and with each
finished shard of the Ray engine (the workers' batches are not reported back).

The engine decides only who encodes a shard; what a shard's vectors are is
:func:`encode_shard` in both engines.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from termnorm.encoders.protocols import Encoder
from termnorm.errors import ArtifactMismatchError
from termnorm.index.shards import Shard, ShardStore
from termnorm.index.vectors import STORAGE_DTYPE

__all__ = [
    "LocalEngine",
    "OnBatch",
    "ShardEngine",
    "StreamReport",
    "encode_shard",
    "stream_term_vectors",
]

logger = logging.getLogger(__name__)


def refuse_bad_vectors(vectors: np.ndarray, texts: Sequence[str]) -> None:
    """Raise when the encoder gave a NaN/infinite or all-zero vector, naming the first terms."""
    bad = ~np.isfinite(vectors).all(axis=1) | ~(np.abs(vectors) > 0).any(axis=1)
    if bad.any():
        rows = np.flatnonzero(bad)
        shown = ", ".join(repr(str(texts[i])) for i in rows[:5])
        raise ArtifactMismatchError(
            f"the encoder gave {len(rows)} term(s) a NaN, infinite or all-zero vector "
            f"(first: {shown}); such terms cannot be searched. Check the model folder (a "
            "damaged or untrained model), or remove these terms from the KG, and build again"
        )


OnBatch = Callable[[int], None]
"""Called with the number of strings of each encoder batch as it is done."""


def encode_shard(
    encoder: Encoder, texts: Sequence[str], batch_size: int, on_batch: OnBatch | None = None
) -> np.ndarray:
    """float16 ``[len(texts), d]`` vectors of one shard's strings (checked, then rounded);
    ``on_batch`` follows the encoder's batches.

    Raises :class:`~termnorm.errors.ArtifactMismatchError` for vectors of the wrong shape
    and for NaN, infinite or all-zero vectors.
    """
    dim = int(encoder.dimension)
    vectors = encoder.encode(texts, batch_size=batch_size, show_progress=False, on_batch=on_batch)
    if vectors.shape != (len(texts), dim):
        raise ArtifactMismatchError(
            f"the encoder returned vectors of shape {vectors.shape} for {len(texts)} texts "
            f"(expected dimension {dim}); check the model folder"
        )
    refuse_bad_vectors(vectors, texts)
    return vectors.astype(STORAGE_DTYPE)


class ShardEngine(Protocol):
    """Who encodes the shards of a build; a context manager (a Ray engine holds its Ray
    session while entered)."""

    def __enter__(self) -> ShardEngine:
        """Start what the engine needs (nothing, or a Ray session)."""
        ...

    def __exit__(self, *exc: object) -> None:
        """Stop it."""
        ...

    def describe(self) -> dict[str, Any]:
        """What the index card records of the engine (``engine``, ``device``, ...)."""
        ...

    def encode(
        self, shards: Sequence[Shard], texts: pd.Index, on_batch: OnBatch | None = None
    ) -> Iterator[tuple[Shard, np.ndarray]]:
        """``(shard, float16 vectors)`` for each of ``shards`` (strings ``texts[start:stop]``),
        as each is done, in any order. An engine that calls ``on_batch`` reports the batches
        of one shard at a time, each before that shard is yielded; one that does not (Ray)
        lets the caller count the shard when it arrives."""
        ...


@dataclass
class LocalEngine:
    """Shards encoded in this process, in order, by ``encoder``."""

    encoder: Encoder
    batch_size: int

    def __enter__(self) -> LocalEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def describe(self) -> dict[str, Any]:
        """``engine: local`` and the encoder's device (``cpu`` for encoders without one)."""
        device = getattr(self.encoder, "device", None)
        return {"engine": "local", "device": str(getattr(device, "type", device or "cpu"))}

    def encode(
        self, shards: Sequence[Shard], texts: pd.Index, on_batch: OnBatch | None = None
    ) -> Iterator[tuple[Shard, np.ndarray]]:
        """Each shard through :func:`encode_shard`, in order, reporting its batches."""
        for shard in shards:
            strings = texts[shard.start : shard.stop].tolist()
            yield shard, encode_shard(self.encoder, strings, self.batch_size, on_batch)


@dataclass
class StreamReport:
    """How the shards of a build were obtained."""

    shards: int = 0
    resumed: int = 0  # read back from the work folder
    encoded: int = 0  # encoded by this run


def stream_term_vectors(
    codes: np.ndarray,
    uniques: pd.Index,
    dim: int,
    shards: Sequence[Shard],
    engine: ShardEngine,
    store: ShardStore | None = None,
    show_progress: bool = True,
) -> tuple[np.ndarray, StreamReport]:
    """float16 ``[len(codes), d]``: row ``i`` is the vector of ``uniques[codes[i]]``.

    ``shards`` cover ``uniques`` in order; those ``store`` holds are read back, the others
    encoded by ``engine`` (and written to ``store``). Each shard's vectors are scattered to
    the rows that use its strings as they arrive, then dropped.
    """
    out = np.empty((len(codes), dim), dtype=STORAGE_DTYPE)
    order = np.argsort(codes, kind="stable")  # term rows grouped by string
    grouped = codes[order]
    report = StreamReport(shards=len(shards))

    def scatter(shard: Shard, vectors: np.ndarray) -> None:
        lo, hi = np.searchsorted(grouped, [shard.start, shard.stop])
        rows = order[lo:hi]
        out[rows] = vectors[codes[rows] - shard.start]

    done = [s for s in shards if store is not None and store.has(s)]
    for shard in done:
        assert store is not None
        scatter(shard, store.read(shard))
    report.resumed = len(done)
    todo = [s for s in shards if store is None or not store.has(s)]
    if done:
        logger.info("resuming: %d of %d shards were finished earlier", len(done), len(shards))
    where = engine.describe()
    bar = tqdm(
        total=len(uniques),
        initial=sum(len(s) for s in done),
        unit="term",
        desc=f"encoding ({where['engine']}, {where['device']})",
        disable=not show_progress,
    )
    bar.set_postfix_str(f"shards {len(done)}/{len(shards)}", False)
    batched = 0  # strings of the shard in progress the bar already counted by batches

    def on_batch(n: int) -> None:
        nonlocal batched
        batched += n
        bar.update(n)

    try:
        for shard, vectors in engine.encode(todo, uniques, on_batch):
            if store is not None:
                store.write(shard, vectors)
            scatter(shard, vectors)
            report.encoded += 1
            bar.set_postfix_str(f"shards {len(done) + report.encoded}/{len(shards)}", False)
            bar.update(len(shard) - batched)  # all of it when the engine reports no batches
            batched = 0
    finally:
        bar.close()
    return out, report
