"""Concept attributes (LOINC's axes, OMOP's vocabulary and code) in the service's answers:
``/v1/normalize`` candidates, ``/v1/concepts/ID`` (the concept and its KG neighbours),
``/v1/annotate`` candidates and the review API's row candidates, each left out when the
concept has none (the answers over a KG without attributes are what they were), and
documented with an example in the OpenAPI page."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("prometheus_client")

from fastapi.testclient import TestClient

from _project_fixtures import write_codes
from _serve_fixtures import (
    ATTRIBUTED,
    GLUCOSE,
    HBA1C,
    HOSTILE,
    build_tiny_index,
    make_attributed_kg,
    serving,
)
from termnorm import api
from termnorm.projects import PipelineSettings, add_reviewer, init_project, run_project
from termnorm.serve.schemas import ATTRIBUTES_EXAMPLE

PROVENANCE = {"source", "term_source", "is_preferred", "semantic_types"}
SCORES = {"score", "recall_score", "ranker_score"}
CANDIDATE_FIELDS = {"concept_id", "name", "matched_term", "rank"} | PROVENANCE | SCORES
"""A ``/v1/normalize`` candidate's fields before attributes existed."""


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    folder = tmp_path_factory.mktemp("serve_attributes")
    with pytest.MonkeyPatch.context() as patch:  # the annotator's dictionary cache
        patch.setenv("TERMNORM_CACHE", str(folder / "cache"))
        yield folder


@pytest.fixture(scope="module")
def index_dir(root: Path, tiny_bert_path: Path) -> Path:
    return build_tiny_index(root / "attributed", tiny_bert_path, make_attributed_kg())


@pytest.fixture(scope="module")
def client(index_dir: Path) -> Iterator[TestClient]:
    with serving(index_dir) as client:
        yield client


def _expected(concept_id: str) -> dict[str, str]:
    return ATTRIBUTED[concept_id][2]


def test_normalize_candidates_carry_their_concepts_attributes(client: TestClient) -> None:
    answer = client.post("/v1/normalize", json={"texts": ["glucose serum", "chem panel"], "k": 5})
    assert answer.status_code == 200, answer.text
    glucose, panel = answer.json()["results"]
    best = glucose["candidates"][0]
    assert best["concept_id"] == "LOINC:2345-7" and best["score"] == pytest.approx(1.0, abs=1e-4)
    assert list(best["attributes"].items()) == list(GLUCOSE.items())  # as the KG gives them
    assert panel["candidates"][0]["concept_id"] == "X:0001"
    assert set(panel["candidates"][0]) == CANDIDATE_FIELDS  # none: left out
    for candidate in glucose["candidates"] + panel["candidates"]:  # all five concepts
        expected = _expected(candidate["concept_id"])
        assert candidate.get("attributes", {}) == expected
        assert set(candidate) == CANDIDATE_FIELDS | ({"attributes"} if expected else set())


def test_a_concept_and_its_neighbours_carry_their_attributes(client: TestClient) -> None:
    glucose = client.get("/v1/concepts/2345-7").json()  # a bare ID resolves
    assert glucose["concept_id"] == "LOINC:2345-7" and glucose["attributes"] == GLUCOSE
    assert glucose["relations"] == [  # the panel has no attributes: the key is left out
        {
            "relation": "member_of",
            "direction": "out",
            "concept_id": "X:0001",
            "name": "Chemistry panel",
        }
    ]
    panel = client.get("/v1/concepts/X:0001").json()
    assert "attributes" not in panel
    assert {r["concept_id"]: r["attributes"] for r in panel["relations"]} == {
        "LOINC:2345-7": GLUCOSE,
        "LOINC:17856-6": HBA1C,
    }
    assert client.get("/v1/concepts/X:0666").json()["attributes"] == HOSTILE  # as given


def test_annotation_candidates_carry_their_attributes(client: TestClient) -> None:
    text = "Fasting glucose serum and hba1c hplc were drawn."
    answer = client.post("/v1/annotate", json={"documents": [{"id": "d", "text": text}], "k": 5})
    assert answer.status_code == 200, answer.text
    annotations = answer.json()["results"][0]["annotations"]
    assert [a["concept_id"] for a in annotations] == ["LOINC:2345-7", "LOINC:17856-6"]
    for annotation in annotations:
        assert annotation["candidates"][0]["attributes"] == _expected(annotation["concept_id"])
        for candidate in annotation["candidates"]:
            expected = _expected(candidate["concept_id"])
            assert candidate.get("attributes", {}) == expected
            assert ("attributes" in candidate) == bool(expected)


def test_review_rows_carry_their_candidates_attributes(index_dir: Path, tmp_path: Path) -> None:
    db = str(tmp_path / "labs.db")
    rows = [("G1", "glucose serum", "10", ""), ("P1", "chem panel", "5", "")]
    codes = write_codes(tmp_path / "codes.csv", rows)
    settings = PipelineSettings.of(index=index_dir, k=5)
    init_project("labs", codes, "code", "label", "count", settings=settings, db=db)
    run_project("labs", api.project_matcher, db=db, show_progress=False)
    auth = {"Authorization": f"Bearer {add_reviewer('labs', 'ann', db=db).token}"}
    with serving(index_dir, project="labs", project_db=db) as client:
        row = client.get("/v1/review/rows/G1", headers=auth).json()
        leased = client.post("/v1/review/next", json={}, headers=auth).json()["row"]
        renewed = client.post(f"/v1/review/rows/{leased['code']}/lease", headers=auth).json()
    assert row["candidates"][0]["concept_id"] == "LOINC:2345-7"
    assert row["candidates"][0]["attributes"] == GLUCOSE
    for shown in (row, leased, renewed):
        assert len(shown["candidates"]) == 5
        for candidate in shown["candidates"]:
            expected = _expected(candidate["concept_id"])
            assert candidate.get("attributes", {}) == expected
            assert ("attributes" in candidate) == bool(expected)


def test_a_kg_without_attributes_answers_as_before(root: Path, tiny_bert_path: Path) -> None:
    with serving(build_tiny_index(root / "plain", tiny_bert_path)) as client:
        answer = client.post("/v1/normalize", json={"texts": ["heart attack"], "k": 3})
        concept = client.get("/v1/concepts/T:0008")
        annotated = client.post(
            "/v1/annotate", json={"documents": [{"id": "d", "text": "a heart attack"}]}
        )
    for response in (answer, concept, annotated):
        assert response.status_code == 200 and "attributes" not in response.text
    assert all(set(c) == CANDIDATE_FIELDS for c in answer.json()["results"][0]["candidates"])


def test_the_openapi_page_documents_attributes_with_an_example(
    index_dir: Path, tmp_path: Path
) -> None:
    db = str(tmp_path / "labs.db")
    codes = write_codes(tmp_path / "codes.csv", [("G1", "glucose serum", "1", "")])
    init_project("labs", codes, "code", "label", db=db)
    with serving(index_dir, project="labs", project_db=db) as client:
        schemas = client.get("/openapi.json").json()["components"]["schemas"]
    named = ["CandidateOut", "ConceptOut", "RelationOut", "RankedConceptOut", "ReviewCandidateOut"]
    for name in named:
        found: dict[str, Any] = schemas.get(name) or schemas[f"{name}-Output"]
        field = found["properties"]["attributes"]
        assert field["type"] == "object" and field["additionalProperties"] == {"type": "string"}
        assert field["examples"] == [ATTRIBUTES_EXAMPLE] and "LOINC" in field["description"]
        assert "attributes" not in found.get("required", []), name
    axes = ["component", "property", "time_aspect", "system", "scale_type", "method_type"]
    assert list(ATTRIBUTES_EXAMPLE)[:6] == axes  # the example in LOINC's order
