"""benchmarks/annotate_load.py: its documents and figures, and a short run against a real
server over the tiny index (annotate answered, health probed, no 5xx)."""

from __future__ import annotations

import asyncio
import importlib.util
import sys
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
