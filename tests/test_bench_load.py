"""benchmarks/load.py: a short load run against a real server over the tiny index gives no
5xx and a 4xx for every malformed request; the malformed bodies are each refused."""

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
pytest.importorskip("prometheus_client")

import httpx

from conftest import make_tiny_kg
from termnorm import api

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "load.py"


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("load_bench", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass resolves its annotations there
    spec.loader.exec_module(module)
    return module


def test_batch_stats_reads_the_histogram() -> None:
    text = (
        "# TYPE termnorm_batch_texts histogram\n"
        'termnorm_batch_texts_bucket{le="1.0"} 2.0\n'
        "termnorm_batch_texts_count 4.0\n"
        "termnorm_batch_texts_sum 10.0\n"
    )
    stats = _script().batch_stats(text)
    assert stats == {"batches": 4, "texts": 10, "mean_texts_per_batch": 2.5}
    earlier = "termnorm_batch_texts_count 1.0\ntermnorm_batch_texts_sum 4.0\n"
    since = _script().batch_stats(text, since=earlier)  # the warm-up's batches taken out
    assert since == {"batches": 3, "texts": 6, "mean_texts_per_batch": 2.0}


@pytest.mark.slow  # ~20 s on the shared 2-core machine (index build, server start, 3 s load)
def test_a_short_load_run_has_no_5xx_and_refuses_every_malformed_request(
    tiny_bert_path: Path, tmp_path: Path
) -> None:
    load = _script()
    kg = make_tiny_kg().save(tmp_path / "kg", card={"sources": [{"format": "fixture"}]})
    index = tmp_path / "idx"
    api.build_index(kg, model=tiny_bert_path, out=index, show_progress=False)
    texts = ["anemia", "iron deficiency", "fever", "headache", "low blood"]
    with load.server(index, tmp_path / "server.log", 120.0) as (base, _):
        outcomes = asyncio.run(
            load.run_load(base, texts, clients=2, duration=3.0, malformed=0.3, seed=0)
        )
        # every malformed kind once, so each is checked whatever the random draw
        for kind in load.MALFORMED_KINDS:
            content, ctype = load.malformed_request(kind, texts)
            answer = httpx.post(
                f"{base}/v1/normalize", content=content, headers={"Content-Type": ctype}
            )
            assert 400 <= answer.status_code < 500, (kind, answer.status_code, answer.text)
        stats = load.batch_stats(httpx.get(f"{base}/metrics").text)
    figures = load.summarize(outcomes, 3.0)
    assert figures["ok_requests"] > 0 and figures["malformed"] > 0
    assert figures["status_5xx"] == 0 and figures["transport_errors"] == 0
    assert figures["valid_not_200"] == 0
    assert figures["malformed_4xx"] == figures["malformed"]
    assert stats["batches"] > 0 and stats["texts"] >= figures["ok_requests"]
