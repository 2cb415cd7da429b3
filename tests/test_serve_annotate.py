"""``POST /v1/annotate``: the library's annotations as JSON, a bad document answered in its
own result while the others are annotated, the limits (documents, characters per request,
body bytes), the request's spec fields, the site guards as for ``/v1/normalize``, and the
OpenAPI page."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")

from fastapi.testclient import TestClient

from _serve_fixtures import cached_tiny_index, serving
from termnorm.annotate.formats import jsonl_rows
from termnorm.annotate.texts import annotate_texts

TEXT = "Patient denies heart attack; history of asthma."


@pytest.fixture(scope="module")
def index_dir(tiny_bert_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield from cached_tiny_index("serve_annotate", tiny_bert_path, tmp_path_factory)


@pytest.fixture(scope="module")
def client(index_dir: Path) -> Iterator[TestClient]:
    with serving(
        index_dir,
        token="t0ken",
        max_documents=3,
        max_document_chars=60,
        max_annotate_chars=200,
        allow_origins=("https://app.example",),
    ) as client:
        yield client


def _annotate(client: TestClient, *texts: str, **fields: Any) -> Any:
    documents = [{"id": f"d{i}", "text": text} for i, text in enumerate(texts)]
    return client.post("/v1/annotate", json={"documents": documents, **fields})


def test_documents_get_the_librarys_annotations(client: TestClient, index_dir: Path) -> None:
    answer = _annotate(client, TEXT, "Mother: sick headache.", min_score=0.99, k=2)
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["k"] == 2 and body["strategy"] == "o-t"
    expected = annotate_texts(
        [TEXT, "Mother: sick headache."], index=index_dir, k=2, min_score=0.99
    )
    for i, (result, wanted) in enumerate(zip(body["results"], expected, strict=True)):
        assert result["doc_id"] == f"d{i}" and result["error"] is None
        rows = result["annotations"]  # the CLI's rows: scores rounded to 6 decimals
        assert rows == [row | {"doc_id": f"d{i}"} for row in jsonl_rows("-", wanted)]
    first = body["results"][0]["annotations"]
    assert [(a["text"], a["concept_id"], a["negated"], a["historical"]) for a in first] == [
        ("heart attack", "T:0001", True, False),
        ("asthma", "T:0004", False, True),
    ]
    assert all(TEXT[a["start"] : a["end"]] == a["text"] for a in first)


def test_the_request_language_and_a_document_lang_choose_the_assertion_rules(
    client: TestClient,
) -> None:
    documents = [
        {"id": "a", "text": "Pas d'hypertension."},
        {"id": "b", "text": "Pas d'hypertension.", "lang": "fr"},
    ]
    body = {"documents": documents, "min_score": 0.99, "language": "en"}
    answer = client.post("/v1/annotate", json=body)
    assert answer.status_code == 200, answer.text
    found = {r["doc_id"]: r["annotations"][0] for r in answer.json()["results"]}
    assert not found["a"]["negated"]
    assert found["a"]["provenance"]["assertion_language"] == "en"
    assert found["b"]["negated"]
    assert found["b"]["provenance"]["assertion_language_source"] == "declared"
    bad = client.post("/v1/annotate", json={**body, "language": "no language"})
    assert bad.status_code == 422


def test_a_bad_document_is_answered_in_its_own_result(client: TestClient) -> None:
    texts = ("x" * 61, "asthma\x00\x01", "Sick headache.")
    body = _annotate(client, *texts, min_score=0.99).json()
    errors = [r["error"] for r in body["results"]]
    assert errors[0] == (
        "document 'd0': 61 characters, over the limit of 60: split it, or raise "
        "max_document_chars (--max-document-chars)"
    )
    assert (
        "document 'd1': binary data, not text: control character U+0000 at character 6"
        in (errors[1])
    )
    assert errors[2] is None
    assert [a["concept_id"] for a in body["results"][2]["annotations"]] == ["T:0005"]
    assert body["results"][0]["annotations"] == body["results"][1]["annotations"] == []


def test_a_lone_surrogate_and_a_blank_text(client: TestClient) -> None:
    raw = '{"documents": [{"id": "a", "text": "asthma \\ud800"}, {"id": "b", "text": "  "}]}'
    answer = client.post(
        "/v1/annotate", content=raw.encode(), headers={"Content-Type": "application/json"}
    )
    assert answer.status_code == 200, answer.text
    a, b = answer.json()["results"]
    assert "lone surrogate U+D800 at character 7" in a["error"]
    assert b == {
        "doc_id": "b",
        "annotations": [],
        "error": None,
        "warning": None,
        "truncated": False,
    }


def _error(answer: Any, status: int) -> dict[str, Any]:
    assert answer.status_code == status, answer.text
    (item,) = answer.json()["detail"]
    return item  # type: ignore[no-any-return]


def test_the_limits(client: TestClient) -> None:
    too_many = _error(_annotate(client, "a", "b", "c", "d"), 422)
    assert too_many["loc"] == ["body", "documents"]
    too_long = _error(_annotate(client, "x" * 60, "y" * 60, "z" * 90), 413)
    assert too_long["loc"] == ["body", "documents"]
    assert "210 characters in all, over the server's limit of 200" in too_long["msg"]
    assert "--max-annotate-chars" in too_long["msg"]
    huge = client.post("/v1/annotate", json={"documents": [{"id": "a", "text": "x" * 100_000}]})
    capped = _error(huge, 413)  # the body limit, before the body is read
    assert capped["loc"] == ["body"] and "--max-annotate-chars" in capped["msg"]
    assert _error(_annotate(client, "asthma", k=101), 422)["loc"] == ["body", "k"]
    empty = client.post("/v1/annotate", json={"documents": []})
    assert _error(empty, 422)["loc"] == ["body", "documents"]
    no_id = client.post("/v1/annotate", json={"documents": [{"text": "asthma"}]})
    assert _error(no_id, 422)["loc"] == ["body", "documents", 0, "id"]


def test_the_request_sets_the_spec_fields_as_normalize_does(client: TestClient) -> None:
    wrong = _error(_annotate(client, "asthma", strategy="x-y"), 422)
    assert wrong["loc"] == ["body", "strategy"]
    unknown = _error(_annotate(client, "asthma", bogus=1), 422)
    assert unknown["loc"] == ["body", "bogus"]
    assert _error(_annotate(client, "asthma", namespaces=["X"]), 422)["loc"] == [
        "body",
        "namespaces",
    ]
    lungs = _annotate(client, "heart attack and asthma", semantic_types=["lung"])
    found = lungs.json()["results"][0]["annotations"]  # no min_score: the dictionary filters
    assert [(a["text"], a["concept_id"]) for a in found] == [("asthma", "T:0004")]
    everything = _annotate(client, "heart attack and asthma").json()["results"][0]
    assert [a["text"] for a in everything["annotations"]] == ["heart attack", "asthma"]


def test_the_site_guards_and_no_token_as_for_normalize(client: TestClient) -> None:
    documents = {"documents": [{"id": "a", "text": "asthma"}]}
    assert client.post("/v1/annotate", json=documents).status_code == 200  # no token needed
    evil = client.post("/v1/annotate", json=documents, headers={"Origin": "https://evil.example"})
    assert _error(evil, 403)["type"] == "cross_origin"
    allowed = client.post("/v1/annotate", json=documents, headers={"Origin": "https://app.example"})
    assert allowed.status_code == 200


def test_openapi_documents_the_route_and_its_limits(index_dir: Path) -> None:
    from termnorm.serve import create_app

    app = create_app(index_dir, max_documents=7)
    with TestClient(app, base_url="http://127.0.0.1") as early:
        schema = early.get("/openapi.json").json()
    operation = schema["paths"]["/v1/annotate"]["post"]
    assert operation["responses"]["200"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/AnnotateOut"
    }
    documents = schema["components"]["schemas"]["AnnotateIn"]["properties"]["documents"]
    assert documents["maxItems"] == 7
    assert {"413", "422", "503"} <= set(operation["responses"])


def test_added_synonyms_reach_the_dictionary(index_dir: Path) -> None:
    with serving(index_dir, token="t0ken") as client:
        before = _annotate(client, "Some ticker trouble.", min_score=0.9).json()
        assert before["results"][0]["annotations"] == []
        added = client.post(
            "/v1/synonyms",
            json={"pairs": [{"concept_id": "T:0001", "text": "ticker trouble"}]},
            headers={"Authorization": "Bearer t0ken"},
        )
        assert added.status_code == 200, added.text
        after = _annotate(client, "Some ticker trouble.", min_score=0.9).json()
        (found,) = after["results"][0]["annotations"]
        assert (found["start"], found["end"], found["concept_id"]) == (5, 19, "T:0001")
        assert found["provenance"]["matched_term"] == "ticker trouble"
