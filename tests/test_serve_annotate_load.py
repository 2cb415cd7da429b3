"""``POST /v1/annotate`` cannot stall the service nor answer without bound: its documents
are annotated and its answer built off the event loop (``/v1/health`` answers meanwhile),
the documents of concurrent requests are annotated together (one batch, the answers those
of requests sent one by one), ``k`` is capped, a document's annotations past
``max_annotations`` are cut (``truncated``), an answer past ``max_answer_mb`` is refused
(413); and every face writes scores to 6 decimals."""

from __future__ import annotations

import asyncio
import json
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")

import httpx
from fastapi.testclient import TestClient

from _serve_fixtures import LOCAL, cached_tiny_index, live_server, serving
from termnorm import api
from termnorm.annotate.pipeline import Annotator
from termnorm.serve import create_app
from termnorm.serve.routes import annotate as annotate_route

TEXT = "Patient denies heart attack; history of asthma."


@pytest.fixture(scope="module")
def index_dir(tiny_bert_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield from cached_tiny_index("serve_annotate_load", tiny_bert_path, tmp_path_factory)


def _documents(*texts: str, **fields: Any) -> dict[str, Any]:
    return {"documents": [{"id": f"d{i}", "text": t} for i, t in enumerate(texts)], **fields}


def _post(url: str, body: dict[str, Any]) -> dict[str, Any]:
    request = urllib.request.Request(
        url, json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=60) as answer:
        return json.loads(answer.read())  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("owner", "name"),
    [(annotate_route, "with_attributes"), (Annotator, "annotate_many")],
    ids=["answer_built", "documents_annotated"],
)
def test_health_answers_while_an_annotate_request_works(
    index_dir: Path, monkeypatch: pytest.MonkeyPatch, owner: Any, name: str
) -> None:
    """The request is held inside its work (the answer's rows half-built, a very large
    answer made slow on purpose; or the library's annotation of its documents):
    ``/v1/health`` must answer before it is released; run on the event loop, it could not."""
    working, release = threading.Event(), threading.Event()
    real = getattr(owner, name)

    def held(*args: Any) -> Any:
        working.set()
        release.wait(30)
        return real(*args)

    monkeypatch.setattr(owner, name, held)
    answers: dict[str, Any] = {}
    with live_server(create_app(index_dir)) as url:
        body = _documents(TEXT, min_score=0.99)
        worker = threading.Thread(
            target=lambda: answers.update(a=_post(f"{url}/v1/annotate", body))
        )
        worker.start()
        try:
            assert working.wait(30), f"the annotate request did not reach {name}"
            with urllib.request.urlopen(f"{url}/v1/health", timeout=10) as health:
                assert (health.status, json.loads(health.read())) == (200, {"status": "alive"})
            assert "a" not in answers  # health answered first
        finally:
            release.set()
            worker.join(30)
    found = answers["a"]["results"][0]["annotations"]
    assert [a["text"] for a in found] == ["heart attack", "asthma"]


def test_annotate_requests_take_turns_on_the_workers(
    index_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With one annotate worker, a second request waits while the first builds its answer
    (fewer threads of Python work: the event loop keeps its share of the interpreter)."""
    inside: set[int] = set()
    peak, entered, release = [0], threading.Event(), threading.Event()
    lock = threading.Lock()
    real = annotate_route.with_attributes

    def held(candidates: Any, index: Any) -> Any:
        with lock:
            inside.add(threading.get_ident())
            peak[0] = max(peak[0], len(inside))
        entered.set()
        release.wait(30)
        with lock:
            inside.discard(threading.get_ident())
        return real(candidates, index)

    monkeypatch.setattr(annotate_route, "with_attributes", held)
    answers: list[dict[str, Any]] = []
    with live_server(create_app(index_dir, annotate_workers=1)) as url:
        body = _documents("asthma", min_score=0.99)
        workers = [
            threading.Thread(target=lambda: answers.append(_post(f"{url}/v1/annotate", body)))
            for _ in range(2)
        ]
        for worker in workers:
            worker.start()
        try:
            assert entered.wait(30)
            time.sleep(1.0)  # time for the second request to reach a thread, if it could
            with lock:
                assert len(inside) == 1
        finally:
            release.set()
            for worker in workers:
                worker.join(30)
    assert peak[0] == 1 and len(answers) == 2
    assert all(a["results"][0]["annotations"][0]["text"] == "asthma" for a in answers)


NOTES = [
    TEXT,
    "No asthma.",
    "Mother had a heart attack.",
    "Asthma; asthma again.",
    "nothing to find here",
    "History of heart attack and asthma.",
]


def _concurrent_answers(
    index_dir: Path, monkeypatch: pytest.MonkeyPatch, **options: Any
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[list[str]]]:
    """The answers to :data:`NOTES` sent one by one, then all at once (two documents a
    request: the note and one that is not text), and the document ids of each
    ``annotate_many`` call made for the concurrent requests."""
    app = create_app(index_dir, **options)
    calls: list[list[str]] = []
    real = Annotator.annotate_many

    def counted(self: Annotator, docs: Any) -> Any:
        docs = list(docs)
        calls.append([doc[0] for doc in docs])
        return real(self, docs)

    def body(i: int, note: str) -> dict[str, Any]:
        documents = [{"id": f"r{i}", "text": note}, {"id": f"r{i}-bad", "text": "a\x00b"}]
        return {"documents": documents, "min_score": 0.99}

    async def scenario() -> tuple[list[httpx.Response], list[httpx.Response]]:
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url=LOCAL) as client:
                for _ in range(600):  # loading
                    if (await client.get("/v1/ready")).status_code == 200:
                        break
                    await asyncio.sleep(0.05)
                one_by_one = [
                    await client.post("/v1/annotate", json=body(i, note))
                    for i, note in enumerate(NOTES)
                ]
                monkeypatch.setattr(Annotator, "annotate_many", counted)
                together = await asyncio.gather(
                    *(client.post("/v1/annotate", json=body(i, n)) for i, n in enumerate(NOTES))
                )
        return one_by_one, list(together)

    one_by_one, together = asyncio.run(scenario())
    assert all(a.status_code == 200 for a in [*one_by_one, *together]), together[0].text
    return [a.json() for a in one_by_one], [a.json() for a in together], calls


def test_the_documents_of_concurrent_requests_are_annotated_together(
    index_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Six requests at once are one ``annotate_many`` call of their six readable documents
    (the one that is not text never reaches it), and each request gets the answer it gets
    alone."""
    alone, together, calls = _concurrent_answers(index_dir, monkeypatch, batch_wait_ms=500.0)
    assert together == alone
    assert len(calls) == 1 and sorted(calls[0]) == sorted(f"r{i}" for i in range(len(NOTES)))
    first = together[0]["results"]
    assert [a["text"] for a in first[0]["annotations"]] == ["heart attack", "asthma"]
    assert first[1]["error"].startswith("document 'r0-bad': binary data, not text")
    assert [a["negated"] for a in together[1]["results"][0]["annotations"]] == [True]


def test_micro_batching_off_annotates_each_request_alone(
    index_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    alone, together, calls = _concurrent_answers(index_dir, monkeypatch, micro_batching=False)
    assert together == alone
    assert sorted(calls) == [[f"r{i}"] for i in range(len(NOTES))]


def test_a_full_document_queue_answers_503_with_retry_after(index_dir: Path) -> None:
    with serving(index_dir, max_batch=1, queue_texts=1) as client:
        answer = client.post("/v1/annotate", json=_documents("asthma", "heart attack"))
        assert client.post("/v1/annotate", json=_documents("asthma")).status_code == 200
    assert answer.status_code == 503 and answer.headers["Retry-After"] == "1"
    (item,) = answer.json()["detail"]
    assert item["loc"] == ["body", "documents"] and item["type"] == "queue_full"
    assert item["msg"].startswith("the annotate queue is full (0 documents waiting, 2 more")


@pytest.fixture(scope="module")
def client(index_dir: Path) -> Iterator[TestClient]:
    with serving(index_dir, max_annotate_k=3, max_annotations=1) as client:
        yield client


def test_k_is_capped(client: TestClient, index_dir: Path) -> None:
    answer = client.post("/v1/annotate", json=_documents("asthma", k=4))
    assert answer.status_code == 422, answer.text
    (item,) = answer.json()["detail"]
    assert item["loc"] == ["body", "k"] and "less than or equal to 3" in item["msg"]
    assert client.post("/v1/annotate", json=_documents("asthma", k=3)).status_code == 200
    schema = client.get("/openapi.json").json()["components"]["schemas"]["AnnotateIn"]
    assert schema["properties"]["k"]["maximum"] == 3
    assert create_app(index_dir).state.settings.max_annotate_k == 20  # the default


def test_annotations_past_the_limit_are_cut(client: TestClient) -> None:
    answer = client.post("/v1/annotate", json=_documents(TEXT, "asthma", "nothing", min_score=0.99))
    assert answer.status_code == 200, answer.text
    cut, one, none = answer.json()["results"]
    assert [a["text"] for a in cut["annotations"]] == ["heart attack"]  # the first by offset
    assert cut["truncated"] is True and cut["error"] is None
    assert [a["text"] for a in one["annotations"]] == ["asthma"] and one["truncated"] is False
    assert none == {
        "doc_id": "d2",
        "annotations": [],
        "error": None,
        "warning": None,
        "truncated": False,
    }


def test_an_answer_past_the_limit_is_refused(index_dir: Path) -> None:
    with serving(index_dir, max_answer_mb=0.002) as client:  # 2,097 bytes
        small = client.post("/v1/annotate", json=_documents("asthma", min_score=0.99))
        assert small.status_code == 200 and len(small.content) < 2097, small.text
        large = client.post("/v1/annotate", json=_documents(TEXT, TEXT, TEXT, k=5))
    assert large.status_code == 413, large.text
    (item,) = large.json()["detail"]
    assert item["loc"] == ["body", "documents"] and item["type"] == "too_large"
    assert item["msg"].startswith("the answer grew past the server's limit of 0.002 MiB at")
    assert "ask a smaller k (this request's is 5)" in item["msg"]
    assert "--max-answer-mb" in item["msg"]


def test_the_service_writes_scores_as_the_cli_does(client: TestClient, index_dir: Path) -> None:
    """6 decimals on every face: the library's scores rounded (float32 cosines differ
    beyond them between processes)."""
    wanted = api.normalize(["heart attack", "asthma"], index=index_dir, k=3)
    body = client.post("/v1/normalize", json={"texts": ["heart attack", "asthma"], "k": 3}).json()
    for result, expected in zip(body["results"], wanted, strict=True):
        scores = [c["score"] for c in result["candidates"]]
        assert scores == [round(c.score, 6) for c in expected]
    assert any(round(c.score, 6) != c.score for row in wanted for c in row)  # not a no-op
