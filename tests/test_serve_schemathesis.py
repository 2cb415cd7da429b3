"""Schemathesis against the service's own OpenAPI spec (issue 29, item 12): every operation,
positive and negative data, every check (server errors, status codes, content types,
response schemas and headers, schema-valid data accepted, schema-violating data rejected,
the bearer token enforced). A bounded, deterministic run over the tiny index, in-process.

Some fields are valid only for what the index holds, which no schema can say: the
namespaces and semantic types of its concepts, strategies whose D targets need domain
synonyms, ``multi`` without a ranker, the content of an uploaded CSV (UTF-8, a header
naming its text column). :func:`_positive_semantics` keeps those fields valid in the cases
Schemathesis generates as valid; negative cases are sent as generated.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("python_multipart")
pytest.importorskip("schemathesis")

import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.python import asgi

from _serve_fixtures import build_tiny_index
from termnorm.serve import create_app

TOKEN = "s3cret"
EXAMPLES = 25  # per operation and phase: the run stays well under a minute
STRATEGIES = ["o-t", "o-c", "d-t", "od-t", "d-t+od-t"]  # D targets: the store has one
NAMESPACES = [None, ["T"]]
SEMANTIC_TYPES = [None, ["cardio"], ["lung", "cardio"]]


def _positive_semantics(context: Any, case: Any) -> Any:
    """A schema-valid case with its index-dependent fields valid for the tiny index."""
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive or not isinstance(case.body, dict):
        return case
    pick = len(repr(case.body))  # deterministic: the generated body chooses
    case.body = dict(case.body)  # a copy: the generator keeps the original
    if case.operation.path == "/v1/normalize":
        case.body["strategy"] = STRATEGIES[pick % len(STRATEGIES)]
        case.body["namespaces"] = NAMESPACES[pick % len(NAMESPACES)]
        case.body["semantic_types"] = SEMANTIC_TYPES[pick % len(SEMANTIC_TYPES)]
        case.body["multi"] = False  # needs --ranker
    elif case.operation.path == "/v1/normalize/file":
        text = str(case.body.get("column") or "asthma").replace('"', "")
        case.body["file"] = ("t.csv", f'term\n"{text}"\n'.encode())
        case.body["column"] = ""
        case.body["strategy"] = STRATEGIES[pick % len(STRATEGIES)]
    return case


@pytest.fixture(scope="module")
def api_schema(tiny_bert_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    root = tmp_path_factory.mktemp("schemathesis")
    store = root / "synonyms.jsonl"
    store.write_text(json.dumps({"concept_id": "T:0001", "text": "ticker trouble"}) + "\n")
    app = create_app(
        build_tiny_index(root, tiny_bert_path),
        synonyms=store,
        token=TOKEN,
        max_batch=8,
        max_chars=50,
        max_k=10,
        allow_hosts=[asgi.HOST],  # the Host Schemathesis's in-process client sends
    )
    with asgi.get_client(app) as client:  # starts the app (its lifespan) once for the run
        deadline = time.monotonic() + 60
        while client.get("/v1/ready").status_code != 200:
            assert time.monotonic() < deadline, "the service did not become ready"
            time.sleep(0.05)
    loaded = schemathesis.openapi.from_asgi("/openapi.json", app)
    loaded.config.generation.update(max_examples=EXAMPLES, deterministic=True)
    loaded.hook("map_case")(_positive_semantics)
    yield loaded
    asgi.shutdown_lifespans()


schema = schemathesis.pytest.from_fixture("api_schema")


@schema.parametrize()
@settings(
    max_examples=EXAMPLES,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)
def test_the_service_conforms_to_its_spec(case: Any) -> None:
    case.call_and_validate(headers={"Authorization": f"Bearer {TOKEN}"})
