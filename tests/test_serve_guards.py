"""The service's defences (issue 29, items 8, 11, 12): a hostile text fails only its own
request, Host and Origin checks (DNS rebinding, cross-site forms), the token checked before
the body is read, every error in the ErrorOut shape, no absolute paths to anonymous clients,
bounded Prometheus labels."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("prometheus_client")

import httpx
from fastapi.testclient import TestClient

from _serve_fixtures import LOCAL, build_tiny_index, serving
from termnorm.serve import create_app
from termnorm.serve.schemas import ErrorOut

TOKEN = "clé-✓-secrète"  # non-ASCII: compared as UTF-8 bytes


@pytest.fixture(scope="module")
def index_dir(tiny_bert_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_index(tmp_path_factory.mktemp("serve_guards"), tiny_bert_path)


@pytest.fixture(scope="module")
def client(index_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    store = tmp_path_factory.mktemp("guards_store") / "syn.jsonl"
    with serving(
        index_dir,
        synonyms=store,
        token=TOKEN,
        max_batch=8,
        max_chars=50,
        max_k=10,
        allow_hosts=("termnorm.lan",),
        allow_origins=("https://app.example",),
    ) as c:
        yield c


def _error(answer: Any, status: int) -> dict[str, Any]:
    """The one ErrorOut item of ``answer``, after checking its status and shape."""
    assert answer.status_code == status, answer.text
    assert answer.headers["content-type"].startswith("application/json")
    body = ErrorOut.model_validate(answer.json())
    assert len(body.detail) >= 1
    return body.detail[0].model_dump()


# ------------------------------------------------------------- item 8: hostile texts
def test_a_lone_surrogate_fails_only_its_own_request(index_dir: Path) -> None:
    app = create_app(index_dir, batch_wait_ms=50.0)
    hostile = '{"texts": ["x \\ud800"]}'  # valid JSON, not encodable as UTF-8

    async def scenario() -> list[httpx.Response]:
        async with app.router.lifespan_context(app):
            for _ in range(600):
                if app.state.runtime.state is not None:
                    break
                await asyncio.sleep(0.05)
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url=LOCAL) as http:
                innocent = [
                    http.post("/v1/normalize", json={"texts": [f"asthma {i}"], "k": 1})
                    for i in range(20)
                ]
                bad = http.post(
                    "/v1/normalize",
                    content=hostile,
                    headers={"content-type": "application/json"},
                )
                return list(await asyncio.gather(bad, *innocent))

    bad, *innocent = asyncio.run(scenario())
    item = _error(bad, 422)
    assert item["loc"] == ["body", "texts", 0] and "surrogate U+D800" in item["msg"]
    assert [a.status_code for a in innocent] == [200] * 20


# ------------------------------------------------------------- item 11: cross-site
@pytest.mark.parametrize(
    "host", ["evil.example", "evil.example:8000", "127.0.0.1.evil.example", "localhost.evil"]
)
def test_dns_rebinding_is_refused(client: TestClient, host: str) -> None:
    item = _error(client.get("/v1/ready", headers={"Host": host}), 421)
    assert item["type"] == "untrusted_host" and "--allow-host" in item["msg"]
    posted = client.post("/v1/normalize", json={"texts": ["x"]}, headers={"Host": host})
    assert posted.status_code == 421


@pytest.mark.parametrize(
    "host",
    ["127.0.0.1:8000", "localhost", "LOCALHOST:80", "[::1]:8000", "10.0.0.7", "termnorm.lan"],
)
def test_the_servers_own_names_pass(client: TestClient, host: str) -> None:
    assert client.get("/v1/health", headers={"Host": host}).status_code == 200


def _upload(client: TestClient, **headers: str) -> Any:
    return client.post(
        "/v1/normalize/file",
        files={"file": ("t.csv", b"term\nasthma\n")},
        headers=headers,
    )


def test_a_cross_origin_upload_is_refused(client: TestClient) -> None:
    item = _error(_upload(client, Origin="https://evil.example"), 403)
    assert item["loc"] == ["header", "Origin"] and "--allow-origin" in item["msg"]
    assert _error(_upload(client, Origin="null"), 403)["type"] == "cross_origin"
    assert (
        _error(
            client.post("/v1/normalize", json={"texts": ["x"]}, headers={"Origin": "http://x.io"}),
            403,
        )["type"]
        == "cross_origin"
    )


@pytest.mark.parametrize(
    "headers",
    [
        {},  # curl, scripts
        {"Origin": LOCAL},  # the service's own page
        {"Origin": "https://app.example"},  # --allow-origin
        {"Origin": "http://localhost:8000", "Host": "localhost:8000"},
    ],
)
def test_same_origin_allowed_origin_and_no_origin_pass(
    client: TestClient, headers: dict[str, str]
) -> None:
    assert _upload(client, **headers).status_code == 200


def test_a_cross_origin_read_passes(client: TestClient) -> None:
    # The browser keeps the answer from the other site (no CORS headers): nothing to refuse.
    assert client.get("/v1/health", headers={"Origin": "https://evil.example"}).status_code == 200


def test_a_malformed_allowed_origin_is_refused_at_creation(index_dir: Path) -> None:
    with pytest.raises(ValueError, match="not a web origin: give scheme://host"):
        create_app(index_dir, allow_origins=["app.example/path"])


# ------------------------------------------------------------- item 12: errors
@pytest.mark.parametrize(
    ("method", "path", "kwargs", "status", "loc"),
    [
        ("GET", "/v1/nope", {}, 404, ["path"]),
        ("GET", "/v1/concepts/NOPE%0A1", {}, 404, ["path"]),  # a control character (issue 41)
        ("GET", "/v1/concepts/NOPE%201", {}, 404, ["path", "concept_id"]),
        ("DELETE", "/v1/normalize", {}, 405, []),
        ("GET", "/v1/normalize", {}, 405, []),
        (
            "POST",
            "/v1/normalize",
            {
                "content": b'{"texts": ["\xff\xfe"]}',
                "headers": {"content-type": "application/json"},
            },
            400,
            ["body"],
        ),
        (
            "POST",
            "/v1/normalize",
            {"content": b'{"texts": [', "headers": {"content-type": "application/json"}},
            422,
            ["body", 11],
        ),
        ("POST", "/v1/normalize", {"json": {"texts": [""]}}, 422, ["body", "texts", 0]),
        ("POST", "/v1/normalize", {"json": {"texts": [" \t"]}}, 422, ["body", "texts", 0]),
        ("POST", "/v1/normalize", {"json": {"texts": ["x"] * 9}}, 422, ["body", "texts"]),
        ("POST", "/v1/normalize", {"json": {"texts": ["x" * 51]}}, 422, ["body", "texts", 0]),
        ("POST", "/v1/normalize", {"json": {"texts": ["x"], "k": 11}}, 422, ["body", "k"]),
    ],
)
def test_every_error_is_error_out(
    client: TestClient,
    method: str,
    path: str,
    kwargs: dict[str, Any],
    status: int,
    loc: list[Any],
) -> None:
    item = _error(client.request(method, path, **kwargs), status)
    assert item["loc"] == loc


def test_the_schema_states_the_limits(client: TestClient) -> None:
    schemas = client.get("/openapi.json").json()["components"]["schemas"]
    texts = schemas["NormalizeIn"]["properties"]["texts"]
    assert (texts["maxItems"], texts["items"]["minLength"], texts["items"]["maxLength"]) == (
        8,
        1,
        50,
    )
    assert schemas["NormalizeIn"]["properties"]["k"]["maximum"] == 10


def test_anonymous_answers_show_no_absolute_path(client: TestClient, index_dir: Path) -> None:
    ready = client.get("/v1/ready").json()
    assert ready["index"] == index_dir.name and "/" not in ready["model"]
    item = _error(client.get("/v1/concepts/NOPE:1"), 404)
    assert "NOPE:1" in item["msg"] and str(index_dir.parent) not in item["msg"]


def _asgi_post(app: Any, path: str, headers: list[tuple[bytes, bytes]]) -> tuple[int, int]:
    """POST to ``app`` at the ASGI level: (status, body messages the app read)."""
    read = {"n": 0}
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        read["n"] += 1
        return {"type": "http.request", "body": b"{" * 1024, "more_body": True}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "headers": [(b"host", b"127.0.0.1:8000"), *headers],
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 8000),
    }
    asyncio.run(app(scope, receive, send))
    return sent[0]["status"], read["n"]


def test_the_token_is_checked_before_the_body_is_read(index_dir: Path) -> None:
    app = create_app(index_dir, token=TOKEN)
    fifty_mb = [(b"content-type", b"application/json"), (b"content-length", b"52428800")]
    started = time.monotonic()
    assert _asgi_post(app, "/v1/synonyms", fifty_mb) == (401, 0)
    wrong = [*fifty_mb, (b"authorization", b"Bearer nope")]
    assert _asgi_post(app, "/v1/synonyms", wrong) == (401, 0)
    assert time.monotonic() - started < 2
    # with the token, the 50 MB body is refused by the size cap, still unread
    right = [*fifty_mb, (b"authorization", b"Bearer " + TOKEN.encode())]
    assert _asgi_post(app, "/v1/synonyms", right) == (413, 0)
    assert _asgi_post(app, "/v1/normalize", fifty_mb) == (413, 0)


def test_a_body_without_length_is_cut_at_the_json_limit(index_dir: Path) -> None:
    app = create_app(index_dir, max_batch=1, max_chars=10)
    status, read = _asgi_post(app, "/v1/normalize", [(b"content-type", b"application/json")])
    limit = app.state.settings.max_json_bytes
    assert status == 413 and read == limit // 1024 + 1  # stopped at the first chunk past it


def test_a_non_ascii_token_unlocks_adding(client: TestClient) -> None:
    body = {"pairs": [{"concept_id": "T:0001", "text": "ticker trouble"}]}
    ok = client.post(
        "/v1/synonyms", json=body, headers={"Authorization": b"Bearer " + TOKEN.encode()}
    )
    assert ok.status_code == 200, ok.text
    wrong = client.post(
        "/v1/synonyms", json=body, headers={"Authorization": b"Bearer " + "clé".encode()}
    )
    assert _error(wrong, 401)["type"] == "unauthorized"


def test_invented_methods_are_counted_as_other(client: TestClient) -> None:
    assert client.request("BREW", "/v1/health").status_code == 405
    metrics = client.get("/metrics").text
    assert 'method="other"' in metrics and "BREW" not in metrics
