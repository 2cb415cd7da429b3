"""Shared helpers of the service tests: the tiny index and a ready client."""

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


def chromium() -> str:
    """The Chromium to drive with Playwright, or a skip saying how to install one."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    pytest.skip("no Chromium installed (Debian: apt-get install chromium); browser tests skipped")


@contextmanager
def live_server(app: FastAPI) -> Iterator[str]:
    """``app`` served by uvicorn on a free loopback port (its URL), once its index is loaded."""
    uvicorn = pytest.importorskip("uvicorn")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error"))
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
