"""Schemathesis against the service's own OpenAPI spec (issue 29, item 12; ``serve --project``
too, issue 41): every operation,
positive and negative data, every check (server errors, status codes, content types,
response schemas and headers, schema-valid data accepted, schema-violating data rejected,
the bearer token enforced). A bounded, deterministic run over the tiny index, in-process.

Some fields are valid only for what the index holds, which no schema can say: the
namespaces and semantic types of its concepts, strategies whose D targets need domain
synonyms, the content of an uploaded CSV (a header naming its text column, in the encoding
the form names). :func:`_positive_semantics` keeps those fields valid in the cases
Schemathesis generates as valid; negative cases are sent as generated. Everything else the
schema says itself (issue 51): ``multi`` is ``false`` only without a ranker, the file's name
ends in .csv/.tsv/.tab, ``encoding`` is one of Python's text codecs.
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

from _project_fixtures import fake_mapped
from _serve_fixtures import GLUCOSE, HOSTILE, MI, build_tiny_index, with_attributes
from conftest import make_tiny_kg
from termnorm.io.decoding import DEFAULT_ENCODING
from termnorm.kg import KnowledgeGraph
from termnorm.projects import add_reviewer
from termnorm.serve import create_app

TOKEN = "s3cret"
EXAMPLES = 25  # per operation and phase: the run stays well under a minute
STRATEGIES = ["o-t", "o-c", "d-t", "od-t", "d-t+od-t"]  # D targets: the store has one
NAMESPACES = [None, ["T"]]
SEMANTIC_TYPES = [None, ["cardio"], ["lung", "cardio"]]


def _positive(case: Any) -> bool:
    meta = case.meta
    return meta is not None and meta.generation.mode.is_positive and isinstance(case.body, dict)


def _csv(text: str, encoding: str) -> str | None:
    """A CSV of one ``text`` (ASCII letters) in ``encoding``, as the text whose UTF-8 bytes
    (what Schemathesis sends for a text part) are that file's; ``None`` when the file has a
    byte above 0x7F (UTF-16, EBCDIC): only ``bytes`` could carry it, and Schemathesis counts
    a body with ``bytes`` as schema-violating, so its case would not be a positive one."""
    written = f"term\n{text}\n".encode(encoding)
    return written.decode("ascii") if written.isascii() else None


def _sendable(context: Any, case: Any) -> bool:
    """Whether a case can be sent as generated (see :func:`_csv`)."""
    if not _positive(case) or case.operation.path != "/v1/normalize/file":
        return True
    return _csv("asthma", case.body.get("encoding") or DEFAULT_ENCODING) is not None


def _positive_semantics(context: Any, case: Any) -> Any:
    """A schema-valid case with its index-dependent fields valid for the tiny index, and an
    uploaded file's content a CSV written in the encoding the case names."""
    if not _positive(case):
        return case
    pick = len(repr(case.body))  # deterministic: the generated body chooses
    case.body = dict(case.body)  # a copy: the generator keeps the original
    if case.operation.path in ("/v1/normalize", "/v1/annotate"):
        case.body["strategy"] = STRATEGIES[pick % len(STRATEGIES)]
        case.body["namespaces"] = NAMESPACES[pick % len(NAMESPACES)]
        case.body["semantic_types"] = SEMANTIC_TYPES[pick % len(SEMANTIC_TYPES)]
    elif case.operation.path == "/v1/normalize/file":
        text = "".join(c for c in str(case.body.get("column")) if c.isascii() and c.isalpha())
        case.body["file"] = _csv(text or "asthma", case.body.get("encoding") or DEFAULT_ENCODING)
        case.body["column"] = ""
        case.body["strategy"] = STRATEGIES[pick % len(STRATEGIES)]
    return case


def _started(app: Any) -> Any:
    """The schema of ``app``, started and ready, with the case hook."""
    with asgi.get_client(app) as client:  # starts the app (its lifespan) once for the run
        deadline = time.monotonic() + 60
        while client.get("/v1/ready").status_code != 200:
            assert time.monotonic() < deadline, "the service did not become ready"
            time.sleep(0.05)
    loaded = schemathesis.openapi.from_asgi("/openapi.json", app)
    loaded.config.generation.update(max_examples=EXAMPLES, deterministic=True)
    loaded.hook("filter_case")(_sendable)
    loaded.hook("map_case")(_positive_semantics)
    return loaded


def _attributed_tiny_kg() -> KnowledgeGraph:
    """The tiny KG, three of its concepts with vocabulary attributes: the answers that
    carry them are checked against the schema too."""
    return with_attributes(make_tiny_kg(), {"T:0001": MI, "T:0002": GLUCOSE, "T:0004": HOSTILE})


def _options(root: Path, tiny_bert_path: Path) -> dict[str, Any]:
    store = root / "synonyms.jsonl"
    store.write_text(json.dumps({"concept_id": "T:0001", "text": "ticker trouble"}) + "\n")
    return {
        "index": build_tiny_index(root, tiny_bert_path, _attributed_tiny_kg()),
        "synonyms": store,
        "max_batch": 8,
        "max_chars": 50,
        "max_k": 10,
        "allow_hosts": [asgi.HOST],  # the Host Schemathesis's in-process client sends
    }


@pytest.fixture(scope="module")
def api_schema(tiny_bert_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    root = tmp_path_factory.mktemp("schemathesis")
    yield _started(create_app(token=TOKEN, **_options(root, tiny_bert_path)))
    asgi.shutdown_lifespans()


@pytest.fixture(scope="module")
def project_schema(tiny_bert_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """``serve --project``: the review API too; the reviewer's token is also the service's,
    so one bearer token unlocks every operation."""
    root = tmp_path_factory.mktemp("schemathesis_project")
    db = str(fake_mapped(root, str(root / "projects.db")))
    REVIEWER["token"] = add_reviewer("p", "ann", db=db).token
    options = _options(root, tiny_bert_path)
    app = create_app(token=REVIEWER["token"], project="p", project_db=db, **options)
    yield _started(app)
    asgi.shutdown_lifespans()


REVIEWER: dict[str, str] = {}
schema = schemathesis.pytest.from_fixture("api_schema")
project = schemathesis.pytest.from_fixture("project_schema")
_RUN = settings(
    max_examples=EXAMPLES,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)


@schema.parametrize()
@_RUN
def test_the_service_conforms_to_its_spec(case: Any) -> None:
    case.call_and_validate(headers={"Authorization": f"Bearer {TOKEN}"})


@project.parametrize()
@_RUN
def test_the_service_with_a_project_conforms_to_its_spec(case: Any) -> None:
    case.call_and_validate(headers={"Authorization": f"Bearer {REVIEWER['token']}"})
