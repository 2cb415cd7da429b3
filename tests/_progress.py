"""Watching a batch job's progress in tests: a stand-in for ``tqdm`` that records each bar,
and a ``kill -9`` of a job's process once its progress record holds some parts."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest


def record_bars(monkeypatch: pytest.MonkeyPatch, module: ModuleType) -> list[dict[str, Any]]:
    """Replace ``module.tqdm`` for the test; each bar made then is a dict of its keyword
    arguments plus ``updates``, the sum of its ``update`` calls, in the returned list."""
    bars: list[dict[str, Any]] = []

    class Bar:
        def __init__(self, **kwargs: Any) -> None:
            bars.append(kwargs | {"updates": 0})
            self.record = bars[-1]

        def update(self, n: int) -> None:
            self.record["updates"] += n

        def close(self) -> None:
            pass

    monkeypatch.setattr(module, "tqdm", Bar)
    return bars


def sigkill_after_parts(
    proc: subprocess.Popen[bytes], progress: Path, parts: int, timeout: float = 240
) -> int:
    """Wait until the progress record ``progress`` holds ``parts`` finished parts, then kill
    ``proc`` with SIGKILL; the rows (documents) the record holds then. Fails the test when the
    job ends first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if progress.is_file() and len(json.loads(progress.read_text())["parts"]) >= parts:
            break
        assert proc.poll() is None, "the job ended before it could be killed"
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    return sum(int(p["rows"]) for p in json.loads(progress.read_text())["parts"])
