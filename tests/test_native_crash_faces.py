"""A document that crashes Ab3P (C++) leaves every face alive: ``POST /v1/annotate``,
``POST /v1/normalize/file``, ``termnorm annotate`` and a batch file answer, the document is
annotated and normalized without its short forms, and its row says so.

``termnorm serve --project`` (a mapping project's service, where ``/v1/annotate`` needs no
token) answers it the same way.

The document is the issue's (a 100,000-character run of bracketed short forms with no full
stop, within every documented limit), written with names of the tiny KG so that spans are
found and Ab3P runs. The CLI and the batch file run in a subprocess, so that a crash would be
an exit code here, not the end of the test run.
"""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("pyab3p")
pytest.importorskip("fastapi")
pytest.importorskip("python_multipart")

from fastapi.testclient import TestClient

from _project_fixtures import write_codes
from _serve_fixtures import LOCAL, cached_tiny_index, serving, wait_ready
from termnorm.projects import PipelineSettings, init_project
from termnorm.serve import create_app

CRASHING = ("heart attack (MI) and asthma (BA) " * 2703)[:100_000]
"""Ab3P segfaults on this text (the issue's shape; 100,000 characters, no full stop)."""
CRASHED = "Ab3P crashed on this document"
SRC = Path(__file__).resolve().parents[1] / "src"


@pytest.fixture(scope="module")
def index_dir(tiny_bert_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield from cached_tiny_index("native_crash", tiny_bert_path, tmp_path_factory)


@pytest.fixture(scope="module")
def client(index_dir: Path) -> Iterator[TestClient]:
    with serving(index_dir) as client:  # the default limits: 100,000 characters a document
        yield client


@pytest.fixture(scope="module")
def project_client(
    index_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[TestClient]:
    """A client of ``serve --project p`` over a new project on the tiny index (SQLite)."""
    root = tmp_path_factory.mktemp("native_crash_project")
    db = str(root / "projects.db")
    settings = PipelineSettings.of(index=index_dir)
    init_project("p", write_codes(root / "codes.csv"), "code", "label", settings=settings, db=db)
    app = create_app(index_dir, project="p", project_db=db)
    with TestClient(app, base_url=LOCAL, raise_server_exceptions=False) as client:
        wait_ready(client)
        yield client


def _termnorm(runs: list[list[str]], cache: Path) -> list[int]:
    """The exit code of ``termnorm ARGS`` for each of ``runs``, one after the other in one
    fresh interpreter (a crash would end it: its exit code, not ours)."""
    env = {**os.environ, "PYTHONPATH": str(SRC), "TERMNORM_CACHE": str(cache)}
    env["OMP_NUM_THREADS"] = "1"
    code = (
        "import json, sys\n"
        "from termnorm.cli.main import main\n"
        "codes = []\n"
        "for args in json.loads(sys.argv[1]):\n"
        "    try:\n"
        "        main(args)\n"
        "    except SystemExit as done:\n"
        "        codes.append(done.code or 0)\n"
        "print(json.dumps(codes))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, json.dumps(runs)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return list(json.loads(done.stdout.splitlines()[-1]))


def test_annotate_route_answers_and_says_the_short_forms_were_not_read(
    client: TestClient,
) -> None:
    documents = [{"id": "crash", "text": CRASHING}, {"id": "fine", "text": "History of asthma."}]
    answer = client.post("/v1/annotate", json={"documents": documents, "min_score": 0.99})
    assert answer.status_code == 200, answer.text[:300]
    crash, fine = answer.json()["results"]
    assert crash["error"] is None and CRASHED in crash["warning"]
    assert {a["concept_id"] for a in crash["annotations"]} >= {"T:0001", "T:0004"}
    assert fine["warning"] is None
    assert [a["concept_id"] for a in fine["annotations"]] == ["T:0004"]
    assert client.get("/v1/health").status_code == 200  # the process lives


def test_annotate_on_a_projects_service_answers_and_the_service_lives(
    project_client: TestClient,
) -> None:
    documents = [{"id": "crash", "text": CRASHING}]
    answer = project_client.post("/v1/annotate", json={"documents": documents, "min_score": 0.99})
    assert answer.status_code == 200, answer.text[:300]
    (crash,) = answer.json()["results"]
    assert crash["error"] is None and CRASHED in crash["warning"]
    assert {a["concept_id"] for a in crash["annotations"]} >= {"T:0001", "T:0004"}
    assert project_client.get("/v1/health").status_code == 200  # the process lives


def test_upload_with_the_document_column_answers_every_row(client: TestClient) -> None:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerows([["term", "document"], ["MI", CRASHING], ["asthma", "Asthma (BA) seen."]])
    data = out.getvalue().encode()
    assert len(data) < 110_000
    answer = client.post("/v1/normalize/file", files={"file": ("t.csv", data)})
    assert answer.status_code == 200, answer.text[:300]
    rows = list(csv.DictReader(io.StringIO(answer.content.decode())))
    assert [(r["term"], r["concept_id"]) for r in rows] == [("MI", "T:0001"), ("asthma", "T:0004")]
    assert CRASHED in rows[0]["abbreviations_unread"]
    assert rows[1]["abbreviations_unread"] == ""
    assert client.get("/v1/health").status_code == 200


def test_cli_annotate_and_a_batch_file_answer_every_document(
    index_dir: Path, tmp_path: Path
) -> None:
    docs = tmp_path / "docs.jsonl"
    lines = [
        json.dumps({"id": "crash", "text": CRASHING}),
        '{"id": "surrogate", "text": "asthma \\ud800 here"}',  # a lone surrogate, as JSON allows
        json.dumps({"id": "empty", "text": ""}),
        json.dumps({"id": "fine", "text": "History of asthma."}),
    ]
    docs.write_text("\n".join(lines) + "\n", encoding="utf-8")
    table = tmp_path / "terms.csv"
    table.write_text(f"term,document\nMI,{CRASHING}\nasthma,Asthma (BA) seen.\n", encoding="utf-8")
    out, mapped = tmp_path / "out.jsonl", tmp_path / "terms.norm.csv"
    index = ["--index", str(index_dir), "--min-score", "0.99"]
    codes = _termnorm(
        [
            ["annotate", str(docs), *index, "--out", str(out)],
            ["normalize", "--input", str(table), "--output", str(mapped), *index],
        ],
        tmp_path / "cache",
    )
    assert codes == [0, 0]

    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    by_doc: dict[str, list[dict[str, object]]] = {}
    for row in rows:
        by_doc.setdefault(str(row["doc_id"]), []).append(row)
    assert list(by_doc) == ["crash", "surrogate", "empty", "fine"]
    assert all(CRASHED in str(row["warning"]) for row in by_doc["crash"])
    assert len(by_doc["crash"]) > 1000
    assert by_doc["surrogate"] == [
        {
            "doc_id": "surrogate",
            "error": "document 'surrogate': not valid Unicode text: a lone surrogate U+D800 at "
            "character 7; give UTF-8 text",
        }
    ]
    assert by_doc["empty"] == [{"doc_id": "empty", "annotations": 0}]
    assert [r["concept_id"] for r in by_doc["fine"]] == ["T:0004"]

    with mapped.open(encoding="utf-8") as f:
        got = list(csv.DictReader(f))
    assert [(r["term"], r["concept_id"]) for r in got] == [("MI", "T:0001"), ("asthma", "T:0004")]
    assert CRASHED in got[0]["abbreviations_unread"] and got[1]["abbreviations_unread"] == ""
