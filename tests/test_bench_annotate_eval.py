"""benchmarks/annotate_eval.py: documents per wall-clock second and per CPU-second, the
CPU-seconds of worker processes counted, and the speed table."""

from __future__ import annotations

import argparse
import importlib
import time
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType, SimpleNamespace

import numpy as np
import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "annotate_eval.py"
TEXTS = ["a b", "c d", "e f", "g h"]


@pytest.fixture()
def bench(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """The benchmark script as a module."""
    monkeypatch.syspath_prepend(str(SCRIPT.parent))
    return importlib.import_module(SCRIPT.stem)


def _burn(seconds: float) -> None:
    """Spend ``seconds`` of this process's CPU time."""
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def _burn_per_text(text: str) -> list[tuple[int, int, str]]:
    _burn(0.05)
    return []


def test_a_pass_counts_the_cpu_seconds_spent_in_other_processes(bench: ModuleType) -> None:
    def work(texts: Sequence[str]) -> float:
        time.sleep(0.02)  # waiting on workers: wall time, no CPU here
        return 2.0  # the workers' CPU-seconds

    speed = bench.timed(work, TEXTS, repeat=2)
    assert 4 / 2.2 < speed.docs_per_cpu_s <= 4 / 2.0
    assert speed.docs_per_s > 4 / 2.0  # the wall clock did not wait 2 s


def test_the_process_figure_is_the_workers_cpu_seconds(bench: ModuleType) -> None:
    speed = bench.in_processes(_burn_per_text, TEXTS, n=2, repeat=1)
    assert 4 / (4 * 0.05 + 0.1) < speed.docs_per_cpu_s <= 4 / (4 * 0.05)


def test_pure_python_speeds_are_one_process_then_one_per_thread_asked(
    bench: ModuleType,
) -> None:
    args = argparse.Namespace(threads=[1, 2], repeat=1)
    speeds = bench.pure_python_speeds("dictionary detector", _burn_per_text, TEXTS, args)
    assert list(speeds) == ["dictionary detector_1t", "dictionary detector_2t"]
    one = speeds["dictionary detector_1t"]
    assert 4 / (4 * 0.05 + 0.1) < one.docs_per_cpu_s <= 4 / (4 * 0.05)
    table = bench.speed_table({"ncbi_devel": {"tagger + normalizer_2t": bench.Speed(31.25, 16.0)}})
    assert table.splitlines()[0] == "| corpus | what | docs/s | docs/CPU-s |"
    assert table.splitlines()[-1] == "| ncbi_devel | tagger + normalizer_2t | 31.2 | 16.0 |"


def test_each_pipeline_pass_starts_with_empty_query_caches(
    bench: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    from termnorm.encoders.query_cache import QueryCache
    from termnorm.search import build

    encoder = SimpleNamespace(query_cache=QueryCache(8))
    encoder.query_cache.put(("fever", "model", "torch"), np.ones(3))
    monkeypatch.setitem(build._encoders, ("model", "mean", 8, "torch"), encoder)
    bench.cold_query_caches()
    assert len(encoder.query_cache) == 0 and encoder.query_cache.maxsize == 8
