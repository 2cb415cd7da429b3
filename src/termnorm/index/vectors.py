"""Stored vectors: float16 rows on disk, read and converted to float32 one block at a time.

An index keeps its term and concept vectors as float16 ``.npy`` files (:data:`STORAGE_DTYPE`),
memory-mapped at load: half the disk and page-cache footprint of float32. Unit vectors lose
nothing that matters to ranking: each component is rounded to 11 significant bits (relative
error ≤ 2⁻¹¹), so an inner product of a float32 query with a float16 row differs from the
float32 one by at most ``2⁻¹¹ · Σ|q_i x_i| ≤ 2⁻¹¹ ≈ 4.9e-4`` (Cauchy-Schwarz), in practice ~1e-4;
only near-ties can swap places. Arithmetic is always float32: a block of rows is converted
(:func:`iter_blocks`), multiplied, and dropped, so no full float32 copy is made unless a
backend asks for one (:meth:`termnorm.index.ExactIndex.resident`).

:class:`NpyRows` reads a large ``.npy`` file by ``pread`` (no memory map), so a sequential scan
of a file bigger than RAM neither fills the process' resident set nor the page tables;
:class:`NpyWriter` appends rows to a new ``.npy`` file chunk by chunk.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "DEFAULT_BLOCK_ROWS",
    "STORAGE_DTYPE",
    "NpyRows",
    "NpyWriter",
    "as_stored",
    "iter_blocks",
    "storage_rounded",
]

STORAGE_DTYPE = np.dtype(np.float16)
DEFAULT_BLOCK_ROWS = 1 << 16
"""Rows converted to float32 at a time (65,536 x 384 x 4 B = 96 MiB)."""


def as_stored(vectors: Any, block_rows: int = DEFAULT_BLOCK_ROWS) -> np.ndarray:
    """``vectors`` ``[n, d]`` as a float16 array, converted block by block (no float32 copy)."""
    if isinstance(vectors, np.ndarray) and vectors.dtype == STORAGE_DTYPE:
        return vectors
    out = np.empty(tuple(vectors.shape), dtype=STORAGE_DTYPE)
    for start, block in iter_blocks(vectors, block_rows):
        out[start : start + len(block)] = block
    return out


def storage_rounded(vectors: np.ndarray) -> np.ndarray:
    """float32 ``vectors`` rounded to :data:`STORAGE_DTYPE` precision.

    For vectors searched beside an index's stored ones (domain synonyms): a text present in
    both then scores exactly as the index's copy does, so ties between them stay ties.
    """
    return np.asarray(vectors, dtype=np.float32).astype(STORAGE_DTYPE).astype(np.float32)


def iter_blocks(
    vectors: Any, block_rows: int = DEFAULT_BLOCK_ROWS, start: int = 0, stop: int | None = None
) -> Iterator[tuple[int, np.ndarray]]:
    """``(first_row, float32 block)`` over rows ``start .. stop`` of ``vectors`` (an array, a
    memory map or :class:`NpyRows`); each block is a fresh contiguous float32 array unless the
    input is already float32 (then it may be a view)."""
    stop = len(vectors) if stop is None else min(stop, len(vectors))
    for first in range(start, stop, block_rows):
        block = np.ascontiguousarray(vectors[first : min(first + block_rows, stop)])
        yield first, block.astype(np.float32, copy=False)


class NpyRows:
    """A 2-D ``.npy`` file read by row ranges with ``pread`` (no memory map).

    ``rows[a:b]`` returns a fresh array in the file's dtype; integer-array indexing reads
    through a memory map (few rows, e.g. re-scoring candidates). Use as a context manager or
    call :meth:`close`.
    """

    ndim = 2

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        with self.path.open("rb") as f:
            version = np.lib.format.read_magic(f)
            read = (
                np.lib.format.read_array_header_1_0
                if version == (1, 0)
                else np.lib.format.read_array_header_2_0
            )
            shape, fortran, dtype = read(f)
            self._offset = f.tell()
        if fortran or len(shape) != 2:
            raise ValueError(f"{self.path} is not a C-ordered 2-D array (shape {shape})")
        self.shape: tuple[int, int] = (int(shape[0]), int(shape[1]))
        self.dtype = np.dtype(dtype)
        self._row_bytes = self.shape[1] * self.dtype.itemsize
        self._fd = os.open(self.path, os.O_RDONLY)
        self._mmap: np.ndarray | None = None

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, key: slice | np.ndarray) -> np.ndarray:
        if isinstance(key, slice):
            start, stop, step = key.indices(self.shape[0])
            if step != 1:
                raise ValueError("NpyRows reads contiguous row ranges only (step 1)")
            n = max(0, stop - start)
            out = np.empty((n, self.shape[1]), dtype=self.dtype)
            view = out.data.cast("B")
            done, want = 0, n * self._row_bytes
            while done < want:  # pread may return fewer bytes than asked
                got = os.preadv(
                    self._fd, [view[done:]], self._offset + start * self._row_bytes + done
                )
                if got <= 0:
                    raise OSError(f"{self.path} ended early (truncated file?)")
                done += got
            return out
        if self._mmap is None:
            self._mmap = np.load(self.path, mmap_mode="r")
        return np.asarray(self._mmap[key])

    def close(self) -> None:
        """Release the file descriptor (and the memory map of indexed reads)."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
        self._mmap = None

    def __enter__(self) -> NpyRows:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class NpyWriter:
    """Write an ``[n, d]`` ``.npy`` file of ``dtype`` by appending row chunks in order.

    The header is written first (the shape is known), then each :meth:`append` writes its
    rows with ``write`` (no memory map, so dirty pages never count towards this process'
    resident set); :meth:`close` checks that exactly ``n`` rows came.
    """

    def __init__(
        self, path: str | Path, n_rows: int, dim: int, dtype: np.dtype = STORAGE_DTYPE
    ) -> None:
        self.path = Path(path)
        self.shape = (int(n_rows), int(dim))
        self.dtype = np.dtype(dtype)
        self.rows_written = 0
        self._file = self.path.open("wb")
        header = {
            "descr": np.lib.format.dtype_to_descr(self.dtype),
            "fortran_order": False,
            "shape": self.shape,
        }
        np.lib.format.write_array_header_2_0(self._file, header)

    def append(self, vectors: np.ndarray) -> None:
        """Write the next rows (converted to the file's dtype)."""
        block = np.ascontiguousarray(vectors, dtype=self.dtype)
        if block.ndim != 2 or block.shape[1] != self.shape[1]:
            raise ValueError(f"expected rows of dimension {self.shape[1]}, got {block.shape}")
        if self.rows_written + len(block) > self.shape[0]:
            raise ValueError(f"{self.path}: more than the {self.shape[0]} rows announced")
        self._file.write(block.tobytes())
        self.rows_written += len(block)

    def close(self) -> None:
        """Finish the file; raises when fewer rows than announced were written."""
        if self._file.closed:
            return
        self._file.close()
        if self.rows_written != self.shape[0]:
            raise ValueError(
                f"{self.path}: {self.rows_written} rows written, {self.shape[0]} announced"
            )

    def __enter__(self) -> NpyWriter:
        return self

    def __exit__(self, kind: type[BaseException] | None, *exc: object) -> None:
        if kind is None:
            self.close()
        else:
            self._file.close()
