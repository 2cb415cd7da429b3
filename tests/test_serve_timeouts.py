"""Slow clients cannot hold the service's connections: a request's headers and body have
deadlines (408, then the connection closed) and a connection limit answers 503, under
uvicorn as ``termnorm serve`` runs it (``serve/server.py``)."""

from __future__ import annotations

import http.client
import json
import select
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

from _serve_fixtures import build_tiny_index, live_server
from termnorm.serve import create_app

TIMEOUT_S = 0.5
SLACK_S = 5.0  # a loaded CI machine's delay on top of a deadline


@pytest.fixture(scope="module")
def index_dir(tiny_bert_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_index(tmp_path_factory.mktemp("serve_timeouts"), tiny_bert_path)


@pytest.fixture(scope="module")
def address(index_dir: Path) -> Iterator[tuple[str, int]]:
    app = create_app(index_dir, header_timeout_s=TIMEOUT_S, body_timeout_s=TIMEOUT_S)
    with live_server(app) as url:
        parts = urlsplit(url)
        yield str(parts.hostname), int(parts.port or 80)


@contextmanager
def _connection(address: tuple[str, int]) -> Iterator[socket.socket]:
    with socket.create_connection(address, timeout=TIMEOUT_S + SLACK_S) as sock:
        yield sock


def _until_closed(sock: socket.socket) -> tuple[bytes, float]:
    """Everything the server sends until it closes the connection, and the seconds that took
    (``socket.timeout`` when it keeps the connection open past the slack)."""
    start = time.monotonic()
    received = b""
    try:
        while chunk := sock.recv(65536):
            received += chunk
    except ConnectionResetError:  # our bytes that reached a closed socket: what came stays
        pass
    return received, time.monotonic() - start


def _error(answer: bytes) -> dict[str, Any]:
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408 "), answer
    assert b"connection: close" in head.lower()
    (item,) = json.loads(body)["detail"]
    return item  # type: ignore[no-any-return]


def test_half_a_header_is_answered_408_and_closed(address: tuple[str, int]) -> None:
    with _connection(address) as sock:
        sock.sendall(b"GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # no blank line
        answer, seconds = _until_closed(sock)
    item = _error(answer)
    assert item["loc"] == ["headers"] and item["type"] == "timeout"
    assert "did not arrive within 0.5 s (the server's --header-timeout-s)" in item["msg"]
    assert TIMEOUT_S * 0.8 <= seconds < TIMEOUT_S + SLACK_S


def test_a_trickling_body_is_answered_408_and_closed(address: tuple[str, int]) -> None:
    head = (
        b"POST /v1/normalize HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        b"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
    )
    with _connection(address) as sock:
        sock.sendall(head + b'{"texts": ')
        start = time.monotonic()
        try:  # a byte now and then (an idle timeout would never fire), until an answer
            while time.monotonic() - start < TIMEOUT_S + SLACK_S:
                if select.select([sock], [], [], 0.05)[0]:
                    break
                sock.sendall(b" ")
        except OSError:  # closed by the server: what is wanted
            pass
        answer, _ = _until_closed(sock)
        seconds = time.monotonic() - start
    item = _error(answer)
    assert item["loc"] == ["body"]
    assert "(the server's --body-timeout-s)" in item["msg"]
    assert seconds < TIMEOUT_S + SLACK_S


def test_a_silent_connection_is_closed_without_an_answer(address: tuple[str, int]) -> None:
    with _connection(address) as sock:
        answer, seconds = _until_closed(sock)
    assert answer == b""
    assert seconds < TIMEOUT_S + SLACK_S


def test_a_quick_client_is_not_cut(address: tuple[str, int]) -> None:
    """A keep-alive connection serves request after request; the deadline is per request."""
    connection = http.client.HTTPConnection(*address, timeout=TIMEOUT_S + SLACK_S)
    try:
        for _ in range(3):
            connection.request("GET", "/v1/health")
            answer = connection.getresponse()
            assert (answer.status, answer.read()) == (200, b'{"status":"alive"}')
            time.sleep(TIMEOUT_S * 0.6)  # more than the deadline in all, less each time
    finally:
        connection.close()


def test_connections_past_the_limit_answer_503(index_dir: Path) -> None:
    with live_server(create_app(index_dir, max_connections=3)) as url:
        address = urlsplit(url).hostname or "", urlsplit(url).port or 80
        request = b"GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
        with _connection(address), _connection(address):  # two idle connections held
            time.sleep(0.2)  # accepted by the server
            with _connection(address) as third:
                third.sendall(request)
                refused, _ = _until_closed(third)
        with _connection(address) as alone:
            alone.sendall(request)
            served, _ = _until_closed(alone)
    assert refused.startswith(b"HTTP/1.1 503 "), refused
    assert served.startswith(b"HTTP/1.1 200 "), served
