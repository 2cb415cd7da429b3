"""How ``termnorm serve`` runs the app under uvicorn: its options from :class:`ServeSettings`.

uvicorn closes a keep-alive connection that stays idle, but not one whose client has begun
a request and sends it slowly (half a header, a body a byte at a time): hundreds of such
clients hold the server's connections for as long as they like. :class:`TimedH11Protocol`
gives every request deadlines: its headers must arrive within ``header_timeout_s`` of the
connection (or of the previous answer on it), its body within ``body_timeout_s`` of its
headers. Past a deadline the client is answered 408 (``ErrorOut``) when it had sent part of
a request and no answer has started, and the connection is closed; a connection that sent
nothing is closed without an answer. ``max_connections`` is uvicorn's
``limit_concurrency``: a request that arrives while that many connections are open, or
requests are in flight, is answered 503.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from termnorm.errors import MissingExtraError

try:
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise MissingExtraError(exc.name or "uvicorn", "serve") from exc

from termnorm.serve.schemas import error_body
from termnorm.serve.settings import ServeSettings

__all__ = ["TimedH11Protocol", "server_options", "timeout_answer"]

logger = logging.getLogger(__name__)

_WAITING = {h11.IDLE: "headers", h11.SEND_BODY: "body"}
"""What a connection waits for from its client, by the client's h11 state."""


def timeout_answer(part: str, seconds: float, flag: str) -> bytes:
    """The raw HTTP 408 answer (``ErrorOut``, then the connection closes) for a request whose
    ``part`` (``"headers"``, ``"body"``) did not arrive within ``seconds`` (``flag``: the
    server's option that sets them)."""
    message = (
        f"the request's {part} did not arrive within {seconds:g} s (the server's {flag}); "
        "send the whole request at once, or ask the server's operator for a longer timeout"
    )
    body = json.dumps(error_body([part], message, "timeout")).encode("utf-8")
    head = (
        "HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\n"
        f"connection: close\r\ncontent-length: {len(body)}\r\n\r\n"
    )
    return head.encode("ascii") + body


class TimedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with the header and body deadlines of the module docstring
    (class attributes: :func:`server_options` makes a subclass with a service's values)."""

    header_timeout_s: float = 10.0
    body_timeout_s: float = 60.0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline: asyncio.TimerHandle | None = None
        self._waiting: str | None = None  # "headers", "body" or None (the app's turn)

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._watch()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._watch()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._watch()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop()
        super().connection_lost(exc)

    def _stop(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _watch(self) -> None:
        """Start the deadline of what the connection now waits for (a deadline already
        running for it runs on; none while the app answers)."""
        waiting = _WAITING.get(self.conn.their_state)
        if waiting == self._waiting and (waiting is None or self._deadline is not None):
            return
        self._stop()
        self._waiting = waiting
        if waiting is None or self.transport.is_closing():
            return
        seconds = self.header_timeout_s if waiting == "headers" else self.body_timeout_s
        self._deadline = self.loop.call_later(seconds, self._expire, waiting, seconds)

    def _expire(self, part: str, seconds: float) -> None:
        """The deadline for ``part`` passed: 408 if an answer can still be given, then close."""
        self._deadline = None
        if self.transport.is_closing():
            return
        started = part == "body" or bool(self.conn.trailing_data[0])
        answered = self.cycle is not None and self.cycle.response_started and part == "body"
        logger.info(
            "closing a connection from %s: its %s took over %g s", self.client, part, seconds
        )
        if self.cycle is not None and part == "body":  # the app reads a disconnect
            self.cycle.disconnected = True
            self.cycle.message_event.set()
        if started and not answered:
            flag = "--header-timeout-s" if part == "headers" else "--body-timeout-s"
            self.transport.write(timeout_answer(part, seconds, flag))
        self.transport.close()


def server_options(settings: ServeSettings) -> dict[str, Any]:
    """uvicorn's options (``uvicorn.run``, ``uvicorn.Config``) for a service of
    ``settings``: its address, :class:`TimedH11Protocol` with its timeouts and its connection
    limit (``limit_concurrency``)."""
    protocol = type(
        "TimedH11Protocol",
        (TimedH11Protocol,),
        {"header_timeout_s": settings.header_timeout_s, "body_timeout_s": settings.body_timeout_s},
    )
    return {"host": settings.host, "http": protocol, "limit_concurrency": settings.max_connections}
