"""Every error answer of the service in one shape, ``ErrorOut``: ``{"detail": [{"loc",
"msg", "type"}]}``.

:func:`add_error_handlers` answers in that shape for the service's own errors
(:class:`ApiError`, a full queue), for FastAPI's
validation errors (422) and for Starlette's HTTP errors (404 unknown route, 405 wrong
method, with ``Allow`` listing every method of the path; ``OPTIONS`` on such a path is
answered 204 with that ``Allow``; 400 unreadable body, saying why, 413), so no answer is ever
``{"detail": "..."}``; a JSON body sent with another ``Content-Type`` is 415 naming it.
:meth:`ApiError.response` is the same answer for the ASGI guards, which run before routing.
:func:`redact_paths` keeps the absolute paths of the server's files out of what anonymous
clients read.
"""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException

from termnorm.serve.allow import allowed_methods
from termnorm.serve.batching import QueueFullError
from termnorm.serve.schemas import NO_CONTROL, NOT_BLANK, error_body
from termnorm.serve.synonym_store import SynonymStoreError

__all__ = ["MAX_MESSAGE", "ApiError", "add_error_handlers", "clip", "redact_paths", "shorten"]

logger = logging.getLogger(__name__)

_KINDS = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    413: "too_large",
    415: "unsupported_media_type",
}
SHOWN_INPUT = 80
"""Characters of a client's value (a path, a code, an ID) that a message echoes back."""
MAX_MESSAGE = 2000
"""Longest error message: a longer one (a list of a file's columns) keeps its start and
its end, where the advice is, and says how much was cut."""
_UNPARSABLE = "There was an error parsing the body"  # FastAPI's 400 detail
# An absolute POSIX or Windows path: the folders before its last part are dropped.
_ABSOLUTE = re.compile(r"(?<![\w.~-])(?:/|[A-Za-z]:[\\/])(?:[^\s'\"/\\:,;()]+[\\/])+")


class ApiError(Exception):
    """An error answer: HTTP ``status`` with one ``detail`` item (``loc`` names the field,
    ``kind`` is its type) and optional headers; raised by the routes and what they call."""

    def __init__(
        self,
        status: int,
        loc: list[str | int],
        message: str,
        kind: str,
        headers: dict[str, str] | None = None,
    ) -> None:
        message = shorten(message, MAX_MESSAGE)
        super().__init__(message)
        self.status = status
        self.body = error_body(loc, message, kind)
        self.headers = headers

    def response(self, **headers: str) -> JSONResponse:
        """The ``ErrorOut`` answer, with its headers and ``headers``."""
        return JSONResponse(self.body, self.status, {**(self.headers or {}), **headers})


def clip(value: str, limit: int = SHOWN_INPUT) -> str:
    """``repr(value)`` of at most about ``limit`` characters of ``value`` (``'abc...'`` and
    the length when cut): how a message echoes a client's value."""
    if len(value) <= limit:
        return repr(value)
    return f"{value[:limit]!r}... ({len(value)} characters)"


def shorten(message: str, limit: int = 4 * SHOWN_INPUT) -> str:
    """``message`` cut in the middle to about ``limit`` characters, saying how many were cut:
    for a message that echoes a client's value whole (the start and the end, where the
    advice is, are kept)."""
    if len(message) <= limit:
        return message
    half = limit // 2
    cut = len(message) - 2 * half
    return f"{message[:half]} [... {cut} characters cut ...] {message[-half:]}"


def redact_paths(text: str) -> str:
    """``text`` with every absolute path cut to its last part (``/srv/idx/medic`` → ``medic``),
    for answers that anonymous clients read; the full text goes to the server's log."""
    return _ABSOLUTE.sub("", text)


def _http_message(
    request: Request, exc: HTTPException, allowed: str | None
) -> tuple[list[str | int], str]:
    """Where and what, for one of Starlette's HTTP errors (``allowed``: a 405's ``Allow``)."""
    shown = clip(request.url.path)
    if exc.status_code == 404 and exc.detail == "Not Found":
        return ["path"], f"no such route: {shown}; the API is described at /docs"
    if exc.status_code == 405:
        also = f"; allowed: {allowed}" if allowed else ""
        return [], f"method {request.method} is not allowed on {shown}{also}"
    if exc.status_code == 413:
        return list(getattr(exc, "loc", ["body"])), str(exc.detail)
    if exc.status_code == 400 and exc.detail == _UNPARSABLE:
        return ["body"], f"the request body cannot be read: {_unreadable(exc.__cause__)}"
    return [], str(exc.detail)


def _unreadable(cause: BaseException | None) -> str:
    """Why the JSON reader refused a body (FastAPI's 400 carries the error as its cause),
    and what to send instead."""
    if isinstance(cause, RecursionError):
        return (
            "its JSON is nested too deeply for the server's JSON reader (no request of this "
            "API nests more than a few levels); send the body the schema at /docs describes"
        )
    if isinstance(cause, ValueError) and "integer string conversion" in str(cause):
        return (
            f"a number in it has more than {sys.get_int_max_str_digits()} digits; send "
            "numbers in the ranges the schema at /docs gives (k: 1 to the server's --max-k)"
        )
    if isinstance(cause, UnicodeDecodeError):
        return f"it is not UTF-8 ({cause.reason} at byte {cause.start}); send UTF-8 JSON"
    return "send UTF-8 JSON"


def _sent_as(request: Request, errors: Sequence[Any]) -> ApiError | None:
    """A 415 naming the ``Content-Type`` when a JSON route's body was left unparsed (FastAPI
    reads only ``application/json`` and ``*+json``: the model then saw the raw bytes)."""
    if not any(
        tuple(e.get("loc", ())) == ("body",) and isinstance(e.get("input"), bytes) for e in errors
    ):
        return None
    given = request.headers.get("content-type")
    shown = f"as Content-Type {clip(given)}" if given else "without a Content-Type"
    return ApiError(
        415,
        ["header", "Content-Type"],
        f"the body was sent {shown}, which this route does not read; send it as JSON with "
        "'Content-Type: application/json'",
        "unsupported_media_type",
    )


def add_error_handlers(app: FastAPI) -> None:
    """Answer every error of ``app`` as ``ErrorOut`` (see the module docstring)."""

    async def api_error(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, ApiError)
        return exc.response()

    async def queue_full(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, QueueFullError)
        headers = {"Retry-After": str(exc.retry_after)}
        return ApiError(503, ["body", exc.items], str(exc), "queue_full", headers).response()

    async def store_failed(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, SynonymStoreError)
        logger.error("%s", exc)
        message = redact_paths(str(exc))
        return ApiError(500, ["body", "pairs"], message, "store_failed").response()

    async def invalid(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        unread = _sent_as(request, exc.errors())
        if unread is not None:
            return unread.response()
        items = [_item(e) for e in exc.errors()]
        return JSONResponse({"detail": items}, status_code=422)

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        headers = {}
        if exc.status_code == 405:
            own = {k.lower(): v for k, v in (exc.headers or {}).items()}.get("allow")
            headers["Allow"] = ", ".join(allowed_methods(request, own))
            if request.method == "OPTIONS":
                return Response(status_code=204, headers=headers)
        loc, message = _http_message(request, exc, headers.get("Allow"))
        kind = _KINDS.get(exc.status_code, "http_error")
        return ApiError(exc.status_code, loc, message, kind, headers).response()

    app.add_exception_handler(ApiError, api_error)
    app.add_exception_handler(QueueFullError, queue_full)
    app.add_exception_handler(SynonymStoreError, store_failed)
    app.add_exception_handler(RequestValidationError, invalid)
    app.add_exception_handler(HTTPException, http_error)


_PATTERN_MESSAGES = {
    NOT_BLANK: "blank: give a text with a character that is not whitespace",
    NO_CONTROL: "contains a control character (or is empty): no ID or code has one",
}
"""What a pattern of the schema means, said instead of the pattern itself."""


def _item(error: Any) -> dict[str, Any]:
    """One of pydantic's errors as an ``ErrorItem`` (no echo of the input); a pattern of
    the schema is explained, not quoted."""
    loc = [p if isinstance(p, int) else str(p) for p in error.get("loc", ())]
    message = str(error.get("msg", ""))
    if error.get("type") == "string_pattern_mismatch":
        pattern = str((error.get("ctx") or {}).get("pattern"))
        message = _PATTERN_MESSAGES.get(pattern, message)
    return {"loc": loc, "msg": message, "type": str(error.get("type", ""))}
