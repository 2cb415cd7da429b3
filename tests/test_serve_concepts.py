"""``GET /v1/concepts/{id}``: the concept's KG neighbours (both directions, limited, counted),
and ``relations: null`` for an index built before indexes held relations."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("prometheus_client")

from _serve_fixtures import build_tiny_index, serving


@pytest.fixture(scope="module")
def index_dir(tiny_bert_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_index(tmp_path_factory.mktemp("serve_concepts"), tiny_bert_path)


def test_a_concept_answers_its_neighbours(index_dir: Path) -> None:
    with serving(index_dir) as client:
        body = client.get("/v1/concepts/T:0001").json()
        assert body["relations"] == [
            {
                "relation": "isa",
                "direction": "out",
                "concept_id": "T:0008",
                "name": "heart disease",
            },
            {
                "relation": "risk_factor_of",
                "direction": "in",
                "concept_id": "T:0002",
                "name": "hypertension",
            },
        ]
        assert body["relations_total"] == 2
        # a neighbour is looked up the same way
        heart = client.get("/v1/concepts/T:0008").json()
        assert {r["concept_id"] for r in heart["relations"]} == {"T:0001", "T:0003"}
        assert client.get("/v1/concepts/T:0005").json()["relations"] == []
        limited = client.get("/v1/concepts/T:0008", params={"relations_limit": 1}).json()
        assert len(limited["relations"]) == 1 and limited["relations_total"] == 2


@pytest.mark.parametrize("limit", ["-1", "1001", "some"])
def test_a_bad_relations_limit_is_422(index_dir: Path, limit: str) -> None:
    with serving(index_dir) as client:
        answer = client.get("/v1/concepts/T:0001", params={"relations_limit": limit})
        assert answer.status_code == 422
        assert answer.json()["detail"][0]["loc"] == ["query", "relations_limit"]


def test_an_index_without_relations_says_null(index_dir: Path, tmp_path: Path) -> None:
    old = tmp_path / "old"
    shutil.copytree(index_dir, old)
    card = json.loads((old / "index.json").read_text())
    card["format_version"] = 2
    del card["tables"]["relations.parquet"]
    (old / "index.json").write_text(json.dumps(card))
    (old / "relations.parquet").unlink()
    with serving(old) as client:
        body = client.get("/v1/concepts/T:0001").json()
        assert body["relations"] is None and body["relations_total"] is None
        assert body["synonyms"][0]["term"] == "myocardial infarction"
        openapi = client.get("/openapi.json").json()
    described = openapi["components"]["schemas"]["ConceptOut"]["properties"]["relations"]
    assert "rebuild" in described["description"]
