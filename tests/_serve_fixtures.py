"""Shared helpers of the service tests: the tiny index, a KG whose concepts carry
vocabulary attributes (LOINC's axes, OMOP's codes, hostile values) and a ready client."""

from __future__ import annotations

import shutil
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from conftest import make_tiny_kg
from termnorm import api
from termnorm.kg import KnowledgeGraph
from termnorm.serve import create_app

LOCAL = "http://127.0.0.1"
"""The base URL of test clients: a Host the service answers to (``testserver`` is not)."""


def build_tiny_index(root: Path, model: Path, kg: KnowledgeGraph | None = None) -> Path:
    """The tiny KG, or ``kg`` (saved in ``root/kg``), indexed with ``model`` in ``root/idx``."""
    kg = make_tiny_kg() if kg is None else kg
    folder = kg.save(root / "kg", card={"sources": [{"format": "fixture"}]})
    api.build_index(folder, model=model, out=root / "idx", show_progress=False)
    return root / "idx"


def cached_tiny_index(
    name: str, model: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Path]:
    """The tiny index in a new folder ``name`` (a module fixture's body: yield from it),
    with ``TERMNORM_CACHE`` there while it is used (annotate compiles dictionaries into it)."""
    root = tmp_path_factory.mktemp(name)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TERMNORM_CACHE", str(root / "cache"))
        yield build_tiny_index(root, model)


def with_attributes(kg: KnowledgeGraph, attributes: dict[str, dict[str, str]]) -> KnowledgeGraph:
    """``kg`` with the concepts named in ``attributes`` given those attributes."""
    concepts = kg.concepts.to_dict("records")
    for concept in concepts:
        concept["attributes"] = attributes.get(concept["concept_id"], concept["attributes"])
    return KnowledgeGraph.from_records(concepts, kg.terms, kg.relations)


# LOINC's axes and OMOP's codes, each concept's keys in alphabetical order (not the order
# the pages show them in); the real codes and axes of LOINC 2345-7 and 17856-6 and of
# SNOMED 22298006 (OMOP 4329847)
GLUCOSE = {
    "class": "CHEM",
    "component": "Glucose",
    "property": "MCnc",
    "scale_type": "Qn",
    "status": "ACTIVE",
    "system": "Ser/Plas",
    "time_aspect": "Pt",
}
HBA1C = {
    "class": "CHEM",
    "component": "Hemoglobin A1c/Hemoglobin.total",
    "method_type": "HPLC",
    "property": "MFr",
    "scale_type": "Qn",
    "status": "ACTIVE",
    "system": "Bld",
    "time_aspect": "Pt",
}
MI = {
    "concept_class_id": "Clinical Finding",
    "concept_code": "22298006",
    "domain_id": "Condition",
    "standard_concept": "S",
    "vocabulary_id": "SNOMED",
}
HOSTILE_NAME = '<img src=x onerror="window.__pwned=1">'
HOSTILE = {
    "component": "<script>window.__pwned=1</script>",
    "system": "Ser" + "x" * 3000,  # very long and unbroken
    "<b>key</b>": '"><img src=x onerror="window.__pwned=1">',
    "constructor": "a key an object's prototype has too",
}
ATTRIBUTED = {
    "LOINC:2345-7": ("Glucose [Mass/volume] in Serum or Plasma", ["glucose serum"], GLUCOSE),
    "LOINC:17856-6": ("Hemoglobin A1c/Hemoglobin.total in Blood by HPLC", ["hba1c hplc"], HBA1C),
    "OMOP:4329847": ("Myocardial infarction", ["heart attack"], MI),
    "X:0001": ("Chemistry panel", ["chem panel"], {}),
    "X:0666": (HOSTILE_NAME, ["hostile"], HOSTILE),
}
"""concept ID -> (name, synonyms, attributes) of :func:`make_attributed_kg`."""


def make_attributed_kg() -> KnowledgeGraph:
    """:data:`ATTRIBUTED` as a KG: two LOINC tests (members of the chemistry panel, which
    has no attributes), an OMOP condition and a concept with hostile name and attributes."""
    concepts = [
        {"concept_id": cid, "name": name, "attributes": attributes}
        for cid, (name, _, attributes) in ATTRIBUTED.items()
    ]
    terms = [
        {"concept_id": cid, "term": term, "source": "fixture", "is_preferred": term == name}
        for cid, (name, synonyms, _) in ATTRIBUTED.items()
        for term in [name, *synonyms]
    ]
    relations = [
        {"head": test, "relation": "member_of", "tail": "X:0001"}
        for test in ("LOINC:2345-7", "LOINC:17856-6")
    ]
    return KnowledgeGraph.from_records(concepts, terms, relations)


def wait_ready(client: TestClient, timeout: float = 60.0) -> dict[str, Any]:
    """Poll ``/v1/ready`` until 200 (the body), failing the test on ``failed`` or timeout."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        answer = client.get("/v1/ready")
        body: dict[str, Any] = answer.json()
        if answer.status_code == 200:
            return body
        assert body["status"] == "loading", body
        time.sleep(0.05)
    raise AssertionError("the service did not become ready")


@contextmanager
def serving(index: Path, **options: Any) -> Iterator[TestClient]:
    """A client of a started, loaded app over ``index``."""
    app = create_app(index, **options)
    with TestClient(app, base_url=LOCAL, raise_server_exceptions=False) as client:
        wait_ready(client)
        yield client


def chromium() -> str:
    """The Chromium to drive with Playwright, or a skip saying how to install one."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    pytest.skip("no Chromium installed (Debian: apt-get install chromium); browser tests skipped")


@contextmanager
def live_server(app: FastAPI) -> Iterator[str]:
    """``app`` served by uvicorn as ``termnorm serve`` runs it (its settings' timeouts and
    connection limit) on a free loopback port (its URL), once its index is loaded."""
    uvicorn = pytest.importorskip("uvicorn")
    from termnorm.serve.server import server_options

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    options = server_options(app.state.settings)
    server = uvicorn.Server(uvicorn.Config(app, port=port, log_level="error", **options))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while app.state.runtime.state is None and time.monotonic() < deadline:
        assert app.state.runtime.error is None, app.state.runtime.error
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
