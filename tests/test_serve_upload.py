"""``POST /v1/normalize/file``: a CSV/TSV upload answered with the mapped file (one row per
input row, as ``termnorm normalize --input``), the column choice, the size limit, and bad
files answered 4xx with the reason."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("prometheus_client")
pytest.importorskip("python_multipart")

from fastapi.testclient import TestClient

from _serve_fixtures import build_tiny_index, serving
from termnorm import api

ROWS = [
    {"id": "1", "term": "heart attack"},
    {"id": "2", "term": ""},  # an empty cell: answered in the row's error, never dropped
    {"id": "3", "term": "bronchial asthma"},
    {"id": "4", "term": "heart attack"},  # a repeat stays a row of its own
    {"id": "5", "term": "thyroid removal"},
]


def _csv(rows: list[dict[str, str]], delimiter: str = ",") -> bytes:
    out = io.StringIO()
    writer = csv.DictWriter(out, list(rows[0]), delimiter=delimiter, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue().encode()


def _rows(data: bytes, delimiter: str = ",") -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(data.decode()), delimiter=delimiter))


@pytest.fixture(scope="module")
def index_dir(tiny_bert_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_index(tmp_path_factory.mktemp("serve_upload"), tiny_bert_path)


@pytest.fixture(scope="module")
def client(index_dir: Path) -> Iterator[TestClient]:
    with serving(index_dir, max_k=10, max_upload_bytes=4096, batch_texts=2) as c:
        yield c


def _upload(client: TestClient, name: str, data: bytes, **form: str) -> Any:
    return client.post("/v1/normalize/file", files={"file": (name, data)}, data=form)


def _error(answer: Any) -> tuple[int, list[object], str]:
    (item,) = answer.json()["detail"]
    return answer.status_code, item["loc"], item["msg"]


# ---------------------------------------------------------------------- mapped files
def test_a_csv_comes_back_mapped_row_for_row(client: TestClient, tmp_path: Path) -> None:
    answer = client.post("/v1/normalize/file", files={"file": ("terms.csv", _csv(ROWS))})
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/csv")
    assert 'filename="terms.norm.csv"' in answer.headers["content-disposition"]
    report = json.loads(answer.headers["x-termnorm-report"])
    assert report == {"column": "term", "rows": 5, "errors": 1, "abstained": 0}
    got = _rows(answer.content)
    assert [(r["id"], r["term"]) for r in got] == [(r["id"], r["term"]) for r in ROWS]
    assert list(got[0]) == [
        "id",
        "term",
        "concept_id",
        "concept_name",
        "score",
        "matched_term",
        "error",
    ]
    assert got[0]["concept_id"] == got[3]["concept_id"] == "T:0001"
    assert got[0]["matched_term"] == "heart attack" and float(got[0]["score"]) > 0.999
    assert got[1]["concept_id"] == "" and got[1]["error"].startswith("empty input")
    # the same answers as the library's (and the CLI's) file run over the same index
    source = tmp_path / "terms.csv"
    source.write_bytes(_csv(ROWS))
    api.normalize_file(
        source,
        tmp_path / "cli.csv",
        index=client.app.state.settings.spec.index,
        show_progress=False,
    )
    want = _rows((tmp_path / "cli.csv").read_bytes())
    key = ("id", "term", "concept_id", "concept_name", "matched_term", "error")
    assert [[r[c] for c in key] for r in got] == [[r[c] for c in key] for r in want]
    assert [r["score"][:6] for r in got] == [r["score"][:6] for r in want]


def test_a_tsv_with_an_explicit_column_and_k(client: TestClient) -> None:
    rows = [{"code": "a", "label": "asthma", "note": "x"}, {"code": "b", "label": "MI", "note": ""}]
    answer = _upload(client, "notes.tsv", _csv(rows, "\t"), column="label", k="3")
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/tab-separated-values")
    got = _rows(answer.content, "\t")
    assert [r["code"] for r in got] == ["a", "b"] and got[0]["concept_id"] == "T:0004"
    candidates = json.loads(got[0]["candidates"])
    assert [c["rank"] for c in candidates] == [1, 2, 3]


# ---------------------------------------------------------------------- refusals
def test_without_a_text_like_column_the_columns_are_named(client: TestClient) -> None:
    rows = [{"id": "1", "label": "asthma"}]
    status, loc, msg = _error(_upload(client, "codes.csv", _csv(rows)))
    assert (status, loc) == (422, ["body", "column"])
    assert msg.startswith("codes.csv: ") and "['id', 'label']" in msg
    status, loc, msg = _error(_upload(client, "codes.csv", _csv(rows), column="name"))
    assert (status, loc) == (422, ["body", "column"]) and "no column 'name'" in msg


def test_an_upload_above_the_limit_is_413_naming_it(client: TestClient) -> None:
    big = _csv([{"term": "asthma " * 20}] * 40)  # > 4096 bytes
    status, loc, msg = _error(_upload(client, "big.csv", big))
    assert (status, loc) == (413, ["body", "file"])
    assert "limit of 4096 bytes" in msg and "--max-upload-mb" in msg
    assert client.get("/v1/ready").status_code == 200  # the service goes on


def test_a_body_without_length_is_cut_at_the_limit(client: TestClient) -> None:
    boundary = "termnormboundary"
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.csv"\r\n'
        "Content-Type: text/csv\r\n\r\nterm\n"
    ).encode()

    def chunks() -> Iterator[bytes]:  # streamed: no Content-Length header is sent
        yield head
        for _ in range(100):
            yield b"asthma asthma asthma asthma asthma asthma asthma\n"
        yield f"\r\n--{boundary}--\r\n".encode()

    answer = client.post(
        "/v1/normalize/file",
        content=chunks(),
        headers={"Content-Type": f"multipart/form-data; boundary={boundary}"},
    )
    assert "content-length" not in answer.request.headers
    status, loc, msg = _error(answer)
    assert (status, loc) == (413, ["body", "file"]) and "4096 bytes" in msg


@pytest.mark.parametrize(
    ("name", "data", "form", "status", "loc", "says"),
    [
        ("sheet.xlsx", b"PK\x03\x04", {}, 415, ["body", "file"], "not a CSV or TSV file"),
        ("bad.csv", b"term\nasthma,extra\n", {}, 422, ["body", "file"], "bad.csv:2: 2 fields"),
        ("empty.csv", b"", {}, 422, ["body", "file"], "empty.csv:1: no header line"),
        ("t.csv", b"term\nasthma\n", {"k": "many"}, 422, ["body", "k"], "integer"),
        ("t.csv", b"term\nasthma\n", {"k": "0"}, 422, ["body", "k"], "greater than or equal"),
        ("t.csv", b"term\nasthma\n", {"k": "11"}, 422, ["body", "k"], "less than or equal to 10"),
        ("t.csv", b"term\nasthma\n", {"strategy": "x-y"}, 422, ["body", "strategy"], ""),
    ],
)
def test_bad_uploads_are_4xx_with_the_reason(
    client: TestClient,
    name: str,
    data: bytes,
    form: dict[str, str],
    status: int,
    loc: list[str],
    says: str,
) -> None:
    got_status, got_loc, msg = _error(_upload(client, name, data, **form))
    assert (got_status, got_loc) == (status, loc) and says in msg


def test_a_request_without_a_file_names_the_field(client: TestClient) -> None:
    status, loc, _ = _error(client.post("/v1/normalize/file", data={"column": "term"}))
    assert (status, loc) == (422, ["body", "file"])
    answer = client.post("/v1/normalize/file", json={"texts": ["asthma"]})
    assert answer.status_code == 422
    assert answer.json()["detail"][0]["loc"] == ["body", "file"]


def test_invalid_utf8_never_answers_5xx(client: TestClient) -> None:
    answer = _upload(client, "latin1.csv", "term\ncafé\nasthma\n".encode("latin-1"))
    assert answer.status_code < 500  # a 422 naming the file, or per-row errors
    if answer.status_code == 200:
        assert len(_rows(answer.content)) == 2
    else:
        assert "latin1.csv" in answer.json()["detail"][0]["msg"]


def test_no_temporary_file_outlives_its_request(
    client: TestClient, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    assert _upload(client, "terms.csv", _csv(ROWS)).status_code == 200
    assert _upload(client, "codes.csv", _csv([{"id": "1", "label": "x"}])).status_code == 422
    assert _upload(client, "bad.csv", b"term\na,b\n").status_code == 422
    assert list(tmp_path.iterdir()) == []
