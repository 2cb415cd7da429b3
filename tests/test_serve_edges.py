"""The service's HTTP edges (issue 51, item 4): only text encodings are read (service and
CLI), HEAD answers wherever GET does, the OpenAPI document states what the service refuses
(its Schemathesis run has no exemptions for them: tests/test_serve_schemathesis.py), error
messages say what happened, and a request with two Origin headers is refused."""

from __future__ import annotations

import itertools
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("python_multipart")

from fastapi.testclient import TestClient
from jsonschema import Draft202012Validator

from _cli import run_main
from _project_fixtures import fake_mapped
from _serve_fixtures import LOCAL, build_tiny_index, serving, wait_ready
from termnorm.io.lines import check_encoding, text_encodings
from termnorm.projects import add_reviewer
from termnorm.serve import create_app

TOKEN = "s3cret"
NOT_TEXT = ["hex", "base64", "rot13", "uu", "bz2", "zlib_codec", "quopri", "undefined", "idna"]


@pytest.fixture(scope="module")
def index_dir(tiny_bert_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_index(tmp_path_factory.mktemp("serve_edges"), tiny_bert_path)


@pytest.fixture(scope="module")
def client(index_dir: Path) -> Iterator[TestClient]:
    with serving(index_dir, token=TOKEN, max_batch=8, max_chars=50, max_k=10) as c:
        yield c


class _Project:
    def __init__(self, root: Path) -> None:
        self.db = str(fake_mapped(root, str(root / "projects.db")))
        self.auth = {"Authorization": f"Bearer {add_reviewer('p', 'ann', db=self.db).token}"}


@pytest.fixture(scope="module")
def project(
    index_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[TestClient, _Project]]:
    reviewing = _Project(tmp_path_factory.mktemp("serve_edges_project"))
    app = create_app(index_dir, project="p", project_db=reviewing.db)
    with TestClient(app, base_url=LOCAL) as c:
        wait_ready(c)
        yield c, reviewing


def _item(answer: Any, status: int) -> dict[str, Any]:
    assert answer.status_code == status, answer.text
    assert answer.headers["content-type"] == "application/json"
    item: dict[str, Any] = answer.json()["detail"][0]
    return item


def _upload(client: TestClient, data: bytes, name: str = "t.csv", **form: str) -> Any:
    return client.post("/v1/normalize/file", files={"file": (name, data)}, data=form)


# ------------------------------------------------- item 4.1: only text encodings
@pytest.mark.parametrize("name", NOT_TEXT)
def test_an_encoding_that_reads_no_text_is_a_422(client: TestClient, name: str) -> None:
    item = _item(_upload(client, b"term\nasthma\n", encoding=name), 422)
    assert item["loc"] == ["body", "encoding"]
    assert f"{name!r} is not a text encoding" in item["msg"] and "utf-8, latin-1" in item["msg"]


def test_text_encodings_in_any_spelling_are_read(client: TestClient) -> None:
    for name in ("UTF8", "Latin-1", "cp1252", "utf_16"):
        data = "term\ncafé\n".encode(name)
        answer = _upload(client, data, encoding=name)
        assert answer.status_code == 200 and "café" in answer.text, (name, answer.text)


def test_the_accepted_encodings_are_pythons_text_codecs() -> None:
    names = text_encodings()
    assert {"utf-8", "utf-8-sig", "utf-16", "iso8859-1", "cp1252", "shift_jis"} <= set(names)
    assert not {"hex", "base64", "rot-13", "bz2", "zlib", "undefined", "idna"} & set(names)
    assert all(check_encoding(name) == name for name in names)
    with pytest.raises(ValueError, match=r"'rot13' is not a text encoding .*'rot-13' codec"):
        check_encoding("rot13")


@pytest.mark.parametrize(
    ("argv", "code"),
    [
        (["normalize", "--input", "{src}", "--output", "{out}", "--index", "{idx}"], 2),
        (
            [
                "map",
                "init",
                "p",
                "--source",
                "{src}",
                "--code-column",
                "code",
                "--text-column",
                "term",
                "--db",
                "{db}",
            ],
            2,
        ),
        (["kg", "build", "{tsv}", "--format", "tsv", "--out", "{out}"], 1),
    ],
)
@pytest.mark.parametrize("name", ["hex", "bz2"])
def test_every_encoding_option_of_the_cli_takes_only_text_encodings(
    argv: list[str], code: int, name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a.csv").write_text("code,term\nA,asthma\n")
    (tmp_path / "d.tsv").write_text("id\tname\nX:1\tasthma\n")
    paths = {
        "src": tmp_path / "a.csv",
        "tsv": tmp_path / "d.tsv",
        "out": tmp_path / "out",
        "idx": tmp_path / "no-index",
        "db": tmp_path / "p.db",
    }
    args = [a.format(**paths) for a in argv] + ["--encoding", name]
    got, _, err = run_main(args, capsys)
    said = " ".join(err.replace("│", " ").split())
    assert got == code and f"{name!r} is not a text encoding" in said, said
    assert "use a Python codec name such as utf-8" in said
    assert not (tmp_path / "out").exists() and not (tmp_path / "p.db").exists()


# ------------------------------------------------------------- item 4.3: HEAD
@pytest.mark.parametrize("path", ["/", "/v1/health", "/v1/ready", "/v1/concepts/T:0001", "/docs"])
def test_head_answers_wherever_get_does(client: TestClient, path: str) -> None:
    got, head = client.get(path), client.head(path)
    assert got.status_code == head.status_code == 200
    assert head.content == b""
    for name in ("content-type", "content-length"):
        assert head.headers[name] == got.headers[name], name
    assert client.options(path).headers["Allow"] == "GET, HEAD, OPTIONS"


def test_head_of_the_review_page(project: tuple[TestClient, _Project]) -> None:
    client, _ = project
    head = client.head("/review")
    assert head.status_code == 200 and head.content == b""
    assert head.headers["content-type"].startswith("text/html")


def test_head_is_still_refused_where_get_is(client: TestClient) -> None:
    refused = client.head("/v1/normalize")
    assert refused.status_code == 405 and refused.headers["Allow"] == "OPTIONS, POST"
    assert "head" not in client.get("/openapi.json").json()["paths"]["/v1/health"]


# --------------------------------------------------- item 4.4: the OpenAPI contract
def _operation(client: TestClient, path: str) -> dict[str, Any]:
    operation: dict[str, Any] = client.get("/openapi.json").json()["paths"][path]["post"]
    return operation


def _component(client: TestClient, name: str) -> dict[str, Any]:
    component: dict[str, Any] = client.get("/openapi.json").json()["components"]["schemas"][name]
    return component


def test_multi_is_false_only_without_a_ranker(client: TestClient) -> None:
    for name in ("NormalizeIn", "AnnotateIn"):
        multi = _component(client, name)["properties"]["multi"]
        assert multi["const"] is False and "no ranker" in multi["description"]
    item = _item(client.post("/v1/normalize", json={"texts": ["asthma"], "multi": True}), 422)
    assert item["loc"] == ["body", "multi"] and "--ranker" in item["msg"]


def test_the_upload_states_its_file_name_and_encodings(client: TestClient) -> None:
    part = _operation(client, "/v1/normalize/file")["requestBody"]["content"]
    disposition = part["multipart/form-data"]["encoding"]["file"]["headers"]
    assert 'filename="terms.csv"' in disposition["Content-Disposition"]["schema"]["example"]
    assert "(415)" in disposition["Content-Disposition"]["description"]
    form = _component(client, "Body_normalize_upload_v1_normalize_file_post")["properties"]
    assert form["encoding"]["enum"] == ["", *text_encodings()]
    assert _item(_upload(client, b"term\nasthma\n", name="terms.txt"), 415)["loc"] == [
        "body",
        "file",
    ]


def test_adding_synonyms_states_its_401_and_403(client: TestClient) -> None:
    responses = _operation(client, "/v1/synonyms")["responses"]
    assert "--token" in responses["401"]["description"]
    assert "without --token" in responses["403"]["description"]
    pairs = {"pairs": [{"concept_id": "T:0001", "text": "ticker"}]}
    assert _item(client.post("/v1/synonyms", json=pairs), 401)["type"] == "unauthorized"


ACTIONS = ["approve", "pick", "no_match", "flag", "comment"]
CONCEPTS: list[dict[str, Any]] = [{}, {"concept_id": None}, {"concept_id": "T:0001"}]
COMMENTS: list[dict[str, Any]] = [{}, {"comment": " "}, {"comment": "see the unit"}]


def test_the_decision_schema_says_what_the_server_refuses(
    project: tuple[TestClient, _Project],
) -> None:
    """Every action with and without a concept and a comment: valid for the schema exactly
    when the server takes it (a stale version: 409, nothing written; refused: 422)."""
    client, reviewing = project
    schema = _component(client, "DecisionIn")
    row = client.get("/v1/review/queue", headers=reviewing.auth).json()["rows"][0]
    url = f"/v1/review/rows/{row['code']}/decisions"
    stale = {"version": row["version"] + 100}
    for action, concept, comment in itertools.product(ACTIONS, CONCEPTS, COMMENTS):
        body = {"action": action, **stale, **concept, **comment}
        answer = client.post(url, json=body, headers=reviewing.auth)
        assert answer.status_code in (409, 422), answer.text
        valid = Draft202012Validator(schema).is_valid(body)
        assert valid == (answer.status_code == 409), (body, answer.text)


# ----------------------------------------------- item 4.5: messages that say what
def _json(client: TestClient, body: bytes, content_type: str = "application/json") -> Any:
    return client.post("/v1/normalize", content=body, headers={"Content-Type": content_type})


def test_a_number_with_too_many_digits_is_named(client: TestClient) -> None:
    item = _item(_json(client, b'{"texts": ["asthma"], "k": ' + b"9" * 5000 + b"}"), 400)
    limit = sys.get_int_max_str_digits()
    assert item["loc"] == ["body"] and f"a number in it has more than {limit} digits" in item["msg"]


def test_json_nested_too_deep_is_named(client: TestClient) -> None:
    item = _item(_json(client, b'{"texts": ' + b"[" * 2500 + b"]" * 2500 + b"}"), 400)
    assert item["loc"] == ["body"] and "nested too deeply" in item["msg"]


def test_a_body_that_is_not_utf8_is_named(client: TestClient) -> None:
    item = _item(_json(client, b'{"texts": ["caf\xe9"]}'), 400)
    assert "it is not UTF-8" in item["msg"] and "at byte 15" in item["msg"]


@pytest.mark.parametrize("value", [b"NaN", b"Infinity", b"-Infinity"])
def test_a_score_that_is_not_a_number_is_named(client: TestClient, value: bytes) -> None:
    item = _item(_json(client, b'{"texts": ["asthma"], "min_score": ' + value + b"}"), 422)
    assert item["loc"] == ["body", "min_score"] and item["msg"] == "Input should be a finite number"
    form = _item(_upload(client, b"term\nasthma\n", min_score=value.decode()), 422)
    assert form["loc"] == ["body", "min_score"] and "finite number" in form["msg"]


@pytest.mark.parametrize(
    ("content_type", "said"),
    [("text/plain", "as Content-Type 'text/plain'"), ("", "without a Content-Type")],
)
def test_json_sent_as_another_type_names_the_content_type(
    client: TestClient, content_type: str, said: str
) -> None:
    item = _item(_json(client, b'{"texts": ["asthma"]}', content_type), 415)
    assert item["loc"] == ["header", "Content-Type"] and said in item["msg"]
    assert "'Content-Type: application/json'" in item["msg"]


# ---------------------------------------------------- item 4.9: one Origin, one Host
@pytest.mark.parametrize("name", ["Origin", "Host"])
def test_a_request_with_two_origins_or_hosts_is_refused(client: TestClient, name: str) -> None:
    own = {"Origin": LOCAL, "Host": "127.0.0.1"}[name]
    other = {"Origin": "https://evil.example", "Host": "evil.example"}[name]
    for first, second in ((own, other), (other, own)):
        headers = [(name, first), (name, second)]
        answer = client.post("/v1/normalize", json={"texts": ["asthma"]}, headers=headers)
        item = _item(answer, 400)
        assert item["loc"] == ["header", name] and item["type"] == "repeated_header"
        assert f"2 {name} headers" in item["msg"]
    alone = client.post("/v1/normalize", json={"texts": ["asthma"]}, headers={"Origin": LOCAL})
    assert alone.status_code == 200
