"""The service's default strategy is the CLI's: a request that names none (as the web page's)
searches the domain synonyms once the service has some, so a synonym added through the API
or the page is found."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("prometheus_client")

from _serve_fixtures import build_tiny_index, serving
from termnorm.search.defaults import DEFAULT_WITH_SYNONYMS, default_strategy


@pytest.fixture(scope="module")
def index_dir(tiny_bert_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_index(tmp_path_factory.mktemp("serve_default"), tiny_bert_path)


def test_the_default_rule_is_the_clis() -> None:
    assert default_strategy(True) == DEFAULT_WITH_SYNONYMS == "d-t+od-t"
    assert default_strategy(False) == "o-t"


def test_a_synonym_added_by_post_is_found_without_naming_a_strategy(
    index_dir: Path, tmp_path: Path
) -> None:
    search = {"texts": ["sugar sickness"], "k": 3}  # what the page sends: no strategy
    with serving(index_dir, synonyms=tmp_path / "syn.jsonl", token="t") as client:
        assert client.get("/v1/ready").json()["strategy"] == "o-t"
        before = client.post("/v1/normalize", json=search).json()
        assert before["strategy"] == "o-t"
        assert all(c["source"] == "ontology" for c in before["results"][0]["candidates"])
        added = client.post(
            "/v1/synonyms",
            json={"pairs": [{"concept_id": "T:0006", "text": "sugar sickness"}]},
            headers={"Authorization": "Bearer t"},
        )
        assert added.status_code == 200, added.text
        assert client.get("/v1/ready").json()["strategy"] == "d-t+od-t"
        after = client.post("/v1/normalize", json=search).json()
        assert after["strategy"] == "d-t+od-t"
        top = after["results"][0]["candidates"][0]
        assert (top["concept_id"], top["source"], top["matched_term"]) == (
            "T:0006",
            "domain",
            "sugar sickness",
        )
        named = client.post("/v1/normalize", json={**search, "strategy": "o-t"}).json()
        assert named["strategy"] == "o-t"  # a named strategy is still obeyed
        # the upload form's default is the same
        upload = client.post(
            "/v1/normalize/file",
            files={"file": ("t.csv", b"term\nsugar sickness\n", "text/csv")},
        )
        assert upload.status_code == 200, upload.text
        assert upload.text.splitlines()[1].startswith("sugar sickness,T:0006,")
