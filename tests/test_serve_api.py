"""The service's JSON API: ready/health, normalize, concepts, synonyms (token, restart),
limits and schema errors (4xx, never 5xx), metrics."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("prometheus_client")

from fastapi.testclient import TestClient

from _serve_fixtures import LOCAL, build_tiny_index, serving, wait_ready
from termnorm import api
from termnorm.serve import create_app
from termnorm.serve import state as serve_state


@pytest.fixture(scope="session")
def index_dir(tiny_bert_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_index(tmp_path_factory.mktemp("serve"), tiny_bert_path)


@pytest.fixture(scope="module")
def client(index_dir: Path) -> Iterator[TestClient]:
    with serving(index_dir, max_batch=8, max_chars=50, max_k=10) as c:
        yield c


# ---------------------------------------------------------------------- start-up
def test_ready_says_loading_until_the_index_is_loaded(
    index_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    release = threading.Event()
    real = serve_state.load_space

    def slow(
        settings: serve_state.ServeSettings,
    ) -> tuple[serve_state.SearchSpace, serve_state.StoreContents]:
        assert release.wait(30)
        return real(settings)

    monkeypatch.setattr("termnorm.serve.app.load_space", slow)
    with TestClient(create_app(index_dir), base_url=LOCAL) as client:
        assert client.get("/v1/health").json() == {"status": "alive"}
        loading = client.get("/v1/ready")
        assert loading.status_code == 503 and loading.json() == {"status": "loading"}
        assert loading.headers["Retry-After"]
        early = client.post("/v1/normalize", json={"texts": ["asthma"]})
        assert early.status_code == 503 and early.json()["detail"][0]["type"] == "loading"
        release.set()
        info = wait_ready(client)
    assert info["status"] == "ready" and info["concepts"] == 10 and info["terms"] == 34
    assert info["domain_synonyms"] == 0


def test_a_failed_load_is_reported_not_hidden(tmp_path: Path) -> None:
    with TestClient(create_app(tmp_path / "no-such-index"), base_url=LOCAL) as client:
        for _ in range(200):
            answer = client.get("/v1/ready")
            if answer.json()["status"] != "loading":
                break
            threading.Event().wait(0.05)
        assert answer.status_code == 503
        assert answer.json()["status"] == "failed" and "no-such-index" in answer.json()["error"]
        assert client.post("/v1/normalize", json={"texts": ["x"]}).status_code == 503


def test_creating_the_app_loads_nothing(index_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(settings: object) -> None:
        raise AssertionError("loaded at creation")

    monkeypatch.setattr("termnorm.serve.app.load_space", boom)
    app = create_app(index_dir)
    assert app.state.runtime.state is None


# ---------------------------------------------------------------------- normalize
def test_normalize_matches_the_library_with_provenance(client: TestClient, index_dir: Path) -> None:
    answer = client.post("/v1/normalize", json={"texts": ["heart attack", " asthma "], "k": 3})
    assert answer.status_code == 200
    body = answer.json()
    assert body["k"] == 3 and body["strategy"] == "o-t"
    expected = api.normalize(["heart attack", "asthma"], index=index_dir, k=3)
    for result, want, text in zip(
        body["results"], expected, ["heart attack", " asthma "], strict=True
    ):
        assert result["text"] == text and result["abstained"] is None
        got = [(c["concept_id"], c["rank"], c["matched_term"]) for c in result["candidates"]]
        assert got == [(c.concept_id, c.rank, c.matched_term) for c in want]
        for c, w in zip(result["candidates"], want, strict=True):
            assert c["score"] == pytest.approx(w.score, abs=1e-5)
            assert c["source"] == "ontology" and c["term_source"] == "tiny"
            assert c["semantic_types"] == list(w.semantic_types)


def test_filters_and_min_score(client: TestClient) -> None:
    body = client.post(
        "/v1/normalize", json={"texts": ["heart attack"], "semantic_types": ["lung"], "k": 10}
    ).json()
    cands = body["results"][0]["candidates"]
    assert cands and all(c["semantic_types"] == ["lung"] for c in cands)
    none = client.post("/v1/normalize", json={"texts": ["asthma"], "min_score": 1.0}).json()
    result = none["results"][0]
    exact = [c for c in result["candidates"] if c["score"] >= 1.0 - 1e-6]
    assert result["candidates"] == exact
    if not exact:
        assert result["abstained"] == "no concept scored >= 1"


@pytest.mark.parametrize(
    ("payload", "loc"),
    [
        ({"texts": ["x"], "strategy": "x-y"}, ["body", "strategy"]),
        ({"texts": ["x"], "strategy": "d-t"}, ["body", "strategy"]),  # no synonyms yet
        ({"texts": ["x"], "namespaces": ["NOPE"]}, ["body", "namespaces"]),
        ({"texts": ["x"], "semantic_types": ["nope"]}, ["body", "semantic_types"]),
        ({"texts": ["x"], "k": 11}, ["body", "k"]),
        ({"texts": ["x"], "k": 0}, ["body", "k"]),
        ({"texts": ["ok", ""]}, ["body", "texts", 1]),
        ({"texts": ["   "]}, ["body", "texts", 0]),
        ({"texts": ["ok", "y" * 51]}, ["body", "texts", 1]),
        ({"texts": []}, ["body", "texts"]),
        ({"texts": "asthma"}, ["body", "texts"]),
        ({"texts": [1, "a"]}, ["body", "texts", 0]),
        ({"texts": [None]}, ["body", "texts", 0]),
        ({"texts": ["a"], "k": "five"}, ["body", "k"]),
        ({"texts": ["a"], "min_score": 2}, ["body", "min_score"]),
        ({"texts": ["a"], "extra": 1}, ["body", "extra"]),
        ({}, ["body", "texts"]),
    ],
)
def test_bad_requests_are_422_naming_the_field(
    client: TestClient, payload: dict[str, object], loc: list[object]
) -> None:
    answer = client.post("/v1/normalize", json=payload)
    assert answer.status_code == 422, answer.text
    assert loc in [item["loc"] for item in answer.json()["detail"]]
    assert all(item["msg"] for item in answer.json()["detail"])


def test_too_many_texts_fail_the_schema(client: TestClient) -> None:
    answer = client.post("/v1/normalize", json={"texts": ["a"] * 9})
    assert answer.status_code == 422
    assert answer.json()["detail"][0]["loc"] == ["body", "texts"]
    assert "at most 8 items" in answer.json()["detail"][0]["msg"]


@pytest.mark.parametrize(
    "raw",
    [
        b"{not json",
        b"",
        b"[]",
        b'"texts"',
        b"null",
        b'{"texts": ["a"]',
        "\udcff".encode("utf-8", "surrogatepass"),
    ],
)
def test_malformed_bodies_are_4xx(client: TestClient, raw: bytes) -> None:
    answer = client.post("/v1/normalize", content=raw, headers={"Content-Type": "application/json"})
    assert 400 <= answer.status_code < 500, answer.text
    assert answer.json()["detail"]


def test_wrong_method_and_path_are_4xx(client: TestClient) -> None:
    assert client.get("/v1/normalize").status_code == 405
    assert client.get("/v1/nothing").status_code == 404


# ---------------------------------------------------------------------- concepts
def test_concept_lookup(client: TestClient) -> None:
    body = client.get("/v1/concepts/T:0001").json()
    assert body["concept_id"] == "T:0001" and body["name"] == "myocardial infarction"
    assert body["semantic_types"] == ["cardio"]
    assert {s["term"] for s in body["synonyms"]} >= {"heart attack", "MI"}
    assert client.get("/v1/concepts/0001").json()["concept_id"] == "T:0001"  # bare ID
    missing = client.get("/v1/concepts/T:9999")
    assert missing.status_code == 404
    assert missing.json()["detail"][0]["loc"] == ["path", "concept_id"]
    assert "T:9999" in missing.json()["detail"][0]["msg"]


# ---------------------------------------------------------------------- synonyms
PAIRS = {
    "pairs": [
        {"concept_id": "T:0002", "text": "raised BP"},
        {"concept_id": "0005", "text": "hemicrania"},
    ]
}


def test_adding_synonyms_needs_the_token(index_dir: Path, tmp_path: Path) -> None:
    with serving(index_dir, synonyms=tmp_path / "syn.jsonl", token="s3cret") as client:
        assert client.post("/v1/synonyms", json=PAIRS).status_code == 401
        wrong = client.post("/v1/synonyms", json=PAIRS, headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401 and wrong.headers["WWW-Authenticate"] == "Bearer"
        assert client.post("/v1/synonyms", json={"bad": 1}).status_code == 401  # auth first
    assert not (tmp_path / "syn.jsonl").exists()
    with serving(index_dir, synonyms=tmp_path / "syn.jsonl") as client:
        off = client.post("/v1/synonyms", json=PAIRS, headers={"Authorization": "Bearer x"})
        assert off.status_code == 403 and "--token" in off.json()["detail"][0]["msg"]


def test_synonyms_are_searched_and_survive_a_restart(index_dir: Path, tmp_path: Path) -> None:
    store = tmp_path / "syn.jsonl"
    auth = {"Authorization": "Bearer s3cret"}
    with serving(index_dir, synonyms=store, token="s3cret") as client:
        added = client.post("/v1/synonyms", json=PAIRS, headers=auth)
        assert added.status_code == 200, added.text
        assert added.json() == {"read": 2, "kept": 2, "encoded_texts": 2, "dropped": {}, "total": 2}
        again = client.post("/v1/synonyms", json=PAIRS, headers=auth).json()
        assert again["kept"] == 0 and again["dropped"] == {"duplicate": 2} and again["total"] == 2
        hit = client.post("/v1/normalize", json={"texts": ["raised BP"], "strategy": "d-t"})
        top = hit.json()["results"][0]["candidates"][0]
        assert top["concept_id"] == "T:0002" and top["source"] == "domain"
        assert top["term_source"] == "syn.jsonl" and top["score"] == pytest.approx(
            1.0, abs=2**-11
        )  # float16 precision
        assert client.get("/v1/concepts/T:0005").json()["domain_synonyms"] == ["hemicrania"]
    lines = [json.loads(x) for x in store.read_text().splitlines()]
    assert lines == [
        {"concept_id": "T:0002", "text": "raised BP"},
        {"concept_id": "T:0005", "text": "hemicrania"},  # resolved to the index's own ID
    ]
    with serving(index_dir, synonyms=store) as client:  # restarted, without a token
        assert client.get("/v1/ready").json()["domain_synonyms"] == 2
        top = client.post(
            "/v1/normalize", json={"texts": ["hemicrania"], "strategy": "d-t+od-t"}
        ).json()["results"][0]["candidates"][0]
        assert top["concept_id"] == "T:0005" and top["source"] == "domain"


@pytest.mark.parametrize(
    ("payload", "status", "loc"),
    [
        (
            {"pairs": [{"concept_id": "T:9999", "text": "x"}]},
            404,  # as GET /v1/concepts/T:9999: the index has no such concept
            ["body", "pairs", 0, "concept_id"],
        ),
        ({"pairs": [{"concept_id": "T:0001", "text": "  "}]}, 422, ["body", "pairs", 0, "text"]),
        ({"pairs": [{"concept_id": "T:0001", "text": ""}]}, 422, ["body", "pairs", 0, "text"]),
        ({"pairs": [{"concept_id": "T:0001"}]}, 422, ["body", "pairs", 0, "text"]),
        ({"pairs": []}, 422, ["body", "pairs"]),
        ({"pairs": [{"concept_id": "T:0001", "text": "x"}] * 9}, 422, ["body", "pairs"]),
    ],
)
def test_bad_synonyms_are_refused_and_nothing_is_stored(
    index_dir: Path, tmp_path: Path, payload: dict[str, object], status: int, loc: list[object]
) -> None:
    store = tmp_path / "syn.jsonl"
    with serving(index_dir, synonyms=store, token="t", max_batch=8) as client:
        answer = client.post("/v1/synonyms", json=payload, headers={"Authorization": "Bearer t"})
        assert answer.status_code == status, answer.text
        assert loc in [item["loc"] for item in answer.json()["detail"]]
        assert client.get("/v1/ready").json()["domain_synonyms"] == 0
    assert not store.exists()


def test_a_damaged_store_fails_the_start_with_file_and_line(
    index_dir: Path, tmp_path: Path
) -> None:
    store = tmp_path / "syn.jsonl"
    store.write_text(
        '{"concept_id": "T:0001", "text": "ok"}\n{"concept_id": "T:0001", "te\n'
        '{"concept_id": "T:0002", "text": "whole"}\n'
    )  # a bad line followed by a whole one: not a torn write, refused
    with TestClient(create_app(index_dir, synonyms=store), base_url=LOCAL) as client:
        for _ in range(400):
            answer = client.get("/v1/ready").json()
            if answer["status"] != "loading":
                break
            threading.Event().wait(0.05)
    assert answer["status"] == "failed" and f"{store.name}:2" in answer["error"]
    assert str(store.parent) not in answer["error"]  # no absolute path to anonymous clients


# ---------------------------------------------------------------------- metrics & docs
def test_metrics_count_requests_by_status_and_batches(client: TestClient) -> None:
    client.post("/v1/normalize", json={"texts": ["asthma", "migraine"]})
    client.post("/v1/normalize", json={"texts": [""]})
    client.get("/v1/concepts/T:0001")
    text = client.get("/metrics").text
    assert 'termnorm_requests_total{method="POST",route="/v1/normalize",status="200"}' in text
    assert 'termnorm_requests_total{method="POST",route="/v1/normalize",status="422"}' in text
    assert 'route="/v1/concepts/{concept_id:path}"' in text and "T:0001" not in text
    assert "termnorm_request_seconds_bucket" in text
    assert "termnorm_batch_texts_count" in text and "termnorm_queue_texts" in text


def test_openapi_declares_the_schemas(client: TestClient) -> None:
    spec = client.get("/openapi.json").json()
    assert {"/v1/normalize", "/v1/concepts/{concept_id}", "/v1/synonyms", "/v1/ready"} <= set(
        spec["paths"]
    )
    schemas = spec["components"]["schemas"]
    assert {"NormalizeIn", "NormalizeOut", "CandidateOut", "ErrorOut"} <= set(schemas)
