"""benchmarks/annotate_load.py: its documents and figures, the rows beside the batch path,
and a short run against a real server over the tiny index (annotate answered, health
probed, no 5xx)."""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import os
import sys
import time
from pathlib import Path
from types import ModuleType

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")
pytest.importorskip("httpx")

from conftest import make_tiny_kg
from termnorm import api

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "annotate_load.py"
PUBTATOR = "1|t|Heart attack.\n1|a|Denies asthma.\n\n2|t|Anemia.\n2|a|Fever and headache.\n"


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("annotate_load_bench", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_documents_join_abstracts_to_the_size_asked(tmp_path: Path) -> None:
    path = tmp_path / "docs.txt"
    path.write_text(PUBTATOR)
    texts = _script().documents(path, chars=40, count=3, seed=0)
    assert len(texts) == 3
    assert all(len(t) >= 40 for t in texts)
    abstracts = {"Heart attack.\nDenies asthma.", "Anemia.\nFever and headache."}
    assert all(set(t.split("\n\n")) <= abstracts for t in texts)


def test_summarize_counts_and_percentiles() -> None:
    annotated = [(200, 0.1, 100, 1000), (200, 0.3, 300, 3000), (503, 0.01, 100, 50), (0, 1.0, 1, 0)]
    health = [0.001, 0.003, float("inf")]
    figures = _script().summarize(annotated, health, seconds=2.0)
    assert figures["annotate_200"] == 2 and figures["annotate_requests_per_s"] == 1.0
    assert figures["annotate_chars_per_s"] == 200 and figures["answer_bytes_mean"] == 2000
    assert (figures["status_5xx"], figures["transport_errors"]) == (1, 1)
    assert figures["health_failed"] == 1 and figures["health_max_ms"] == 3.0
    assert figures["health_p50_ms"] == 2.0


def test_rows_put_each_level_beside_the_batch_path() -> None:
    levels = [
        {"clients": 1, "annotate_requests_per_s": 10.0, "annotate_p50_ms": 90.0},
        {"clients": 8, "annotate_requests_per_s": 25.0, "annotate_p50_ms": 300.0},
    ]
    for level, cpu in zip(levels, (80.0, 40.0), strict=True):
        level.update(annotate_p99_ms=2 * level["annotate_p50_ms"], health_p99_ms=5.0)
        level["cpu_ms_per_request"] = cpu
    batch = {"documents_per_s": 20.0, "cpu_ms_per_document": 40.0}
    rows = _script().compare(levels, batch)
    assert [(r["clients"], r["vs_batch"], r["cpu_vs_batch"]) for r in rows] == [
        (1, 0.5, 0.5),
        (8, 1.25, 1.0),
    ]
    assert rows[1]["p99_ms"] == 600.0 and rows[0]["requests_per_s"] == 10.0


def test_client_counts_and_cpu_seconds() -> None:
    bench = _script()
    assert bench.client_counts("1,8,32") == [1, 8, 32] and bench.client_counts("4") == [4]
    with pytest.raises(argparse.ArgumentTypeError, match=r"positive numbers, e\.g\. 1,8,32"):
        bench.client_counts("1,0")
    before = bench.cpu_seconds(os.getpid())
    end = time.process_time() + 0.2
    while time.process_time() < end:  # burn 0.2 s of CPU
        pass
    assert bench.cpu_seconds(os.getpid()) - before >= 0.15


@pytest.mark.slow  # ~20 s on the shared 2-core machine (index build, server start, 2 s load)
def test_a_short_run_annotates_and_probes_health(tiny_bert_path: Path, tmp_path: Path) -> None:
    bench = _script()
    kg = make_tiny_kg().save(tmp_path / "kg", card={"sources": [{"format": "fixture"}]})
    index = tmp_path / "idx"
    api.build_index(kg, model=tiny_bert_path, out=index, show_progress=False)
    texts = ["Patient denies heart attack; history of asthma."] * 4
    with bench.server(index, tmp_path / "server.log", 120.0) as (base, _):
        annotated, health = asyncio.run(
            bench.run(base, texts, clients=2, duration=2.0, k=3, probe_s=0.05)
        )
    figures = bench.summarize(annotated, health, 2.0)
    assert figures["annotate_200"] > 0 and figures["health_probes"] > 0
    assert (figures["status_5xx"], figures["transport_errors"], figures["health_failed"]) == (
        0,
        0,
        0,
    )
