"""Shared helpers of the service tests: the tiny index and a ready client."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from conftest import make_tiny_kg
from termnorm import api
from termnorm.serve import create_app

LOCAL = "http://127.0.0.1"
"""The base URL of test clients: a Host the service answers to (``testserver`` is not)."""


def build_tiny_index(root: Path, model: Path) -> Path:
    """The tiny KG (saved in ``root/kg``) indexed with ``model`` in ``root/idx``."""
    kg = make_tiny_kg().save(root / "kg", card={"sources": [{"format": "fixture"}]})
    api.build_index(kg, model=model, out=root / "idx", show_progress=False)
    return root / "idx"


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
