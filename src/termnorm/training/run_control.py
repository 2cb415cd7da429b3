"""Run plumbing of the trainer: stop-on-signal, the JSONL log, peak memory.

:class:`StopFlag` turns SIGINT/SIGTERM into a flag the loop checks after each step (so a
checkpoint is written before exiting); under DDP the flag is OR-reduced over ranks so that all
ranks stop at the same step. Between steps the batch source may encode for minutes (its hard
negatives); :meth:`StopFlag.between_batches` is the encoder's per-batch callback there and
raises :class:`StopRequested`, which the trainer turns into the same checkpoint and exit.
"""

from __future__ import annotations

import contextlib
import json
import logging
import resource
import signal
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist

from termnorm.training.distributed import DistInfo

logger = logging.getLogger(__name__)

__all__ = ["StopFlag", "StopRequested", "append_log", "peak_rss_mb", "truncate_log"]


def peak_rss_mb() -> float:
    """Peak resident memory of this process in MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def append_log(path: Path, record: dict[str, Any]) -> None:
    """Append one JSON record to the log."""
    with path.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(record, default=float) + "\n")


def truncate_log(path: Path, step: int) -> None:
    """Drop log records written after ``step`` (a resumed run rewrites them)."""
    if not path.is_file():
        return
    kept = [
        line
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip() and json.loads(line).get("step", 0) <= step
    ]
    path.write_text("".join(line + "\n" for line in kept), encoding="utf-8")


class StopRequested(Exception):
    """A signal arrived while the batch source was encoding: stop before the next batch."""


class StopFlag:
    """Set by SIGINT/SIGTERM while installed; :meth:`check` agrees across DDP ranks."""

    def __init__(self, info: DistInfo) -> None:
        self.info = info
        self.signal: int | None = None
        self._previous: dict[int, Any] = {}

    def install(self) -> None:
        """Route SIGINT and SIGTERM to the flag (only possible in the main thread)."""

        def handler(signum: int, _frame: Any) -> None:
            logger.warning("signal %d: checkpointing after the current step", signum)
            self.signal = signum

        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(ValueError):  # not the main thread: no handler
                self._previous[sig] = signal.signal(sig, handler)

    def restore(self) -> None:
        """Put the previous handlers back."""
        for sig, old in self._previous.items():
            signal.signal(sig, old)
        self._previous.clear()

    def check(self) -> bool:
        """Whether to stop now (any rank saw a signal)."""
        flag = self.signal is not None
        if self.info.enabled and dist.is_initialized():
            t = torch.tensor([1.0 if flag else 0.0], device=self.info.device)
            dist.all_reduce(t, op=dist.ReduceOp.MAX)
            flag = bool(t.item() > 0)
            if flag and self.signal is None:
                self.signal = signal.SIGTERM
        return flag

    def between_batches(self, _texts: int) -> None:
        """An encoder's ``on_batch`` callback: raise :class:`StopRequested` when :meth:`check`
        says stop (every DDP rank encodes the same batches, so all raise at the same one)."""
        if self.check():
            raise StopRequested(f"signal {self.signal} while encoding")
