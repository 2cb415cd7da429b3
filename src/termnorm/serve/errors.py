"""Every error answer of the service in one shape, ``ErrorOut``: ``{"detail": [{"loc",
"msg", "type"}]}``.

:func:`add_error_handlers` answers in that shape for the service's own errors
(:class:`ApiError`, a full queue), for FastAPI's
validation errors (422) and for Starlette's HTTP errors (404 unknown route, 405 wrong
method, 400 unreadable body, 413), so no answer is ever ``{"detail": "..."}``.
:meth:`ApiError.response` is the same answer for the ASGI guards, which run before routing.
:func:`redact_paths` keeps the absolute paths of the server's files out of what anonymous
clients read.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from termnorm.serve.batching import QueueFullError
from termnorm.serve.schemas import error_body
from termnorm.serve.synonym_store import SynonymStoreError

__all__ = ["ApiError", "add_error_handlers", "redact_paths"]

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
_SHOWN_PATH = 80  # characters of an unknown path echoed back
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
        super().__init__(message)
        self.status = status
        self.body = error_body(loc, message, kind)
        self.headers = headers

    def response(self, **headers: str) -> JSONResponse:
        """The ``ErrorOut`` answer, with its headers and ``headers``."""
        return JSONResponse(self.body, self.status, {**(self.headers or {}), **headers})


def redact_paths(text: str) -> str:
    """``text`` with every absolute path cut to its last part (``/srv/idx/medic`` → ``medic``),
    for answers that anonymous clients read; the full text goes to the server's log."""
    return _ABSOLUTE.sub("", text)


def _http_message(request: Request, exc: HTTPException) -> tuple[list[str | int], str]:
    """Where and what, for one of Starlette's HTTP errors."""
    path = request.url.path
    shown = path if len(path) <= _SHOWN_PATH else path[:_SHOWN_PATH] + "..."
    if exc.status_code == 404 and exc.detail == "Not Found":
        return ["path"], f"no such route: {shown!r}; the API is described at /docs"
    if exc.status_code == 405:
        allowed = (exc.headers or {}).get("Allow") or (exc.headers or {}).get("allow")
        also = f"; allowed: {allowed}" if allowed else ""
        return [], f"method {request.method} is not allowed on {shown!r}{also}"
    if exc.status_code == 413:
        return list(getattr(exc, "loc", ["body"])), str(exc.detail)
    if exc.status_code == 400 and exc.detail == _UNPARSABLE:
        return ["body"], "the request body cannot be read: send UTF-8 JSON"
    return [], str(exc.detail)


def add_error_handlers(app: FastAPI) -> None:
    """Answer every error of ``app`` as ``ErrorOut`` (see the module docstring)."""

    async def api_error(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, ApiError)
        return exc.response()

    async def queue_full(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, QueueFullError)
        headers = {"Retry-After": str(exc.retry_after)}
        return ApiError(503, ["body", "texts"], str(exc), "queue_full", headers).response()

    async def store_failed(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, SynonymStoreError)
        logger.error("%s", exc)
        message = redact_paths(str(exc))
        return ApiError(500, ["body", "pairs"], message, "store_failed").response()

    async def invalid(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        items = [_item(e) for e in exc.errors()]
        return JSONResponse({"detail": items}, status_code=422)

    async def http_error(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, HTTPException)
        loc, message = _http_message(request, exc)
        kind = _KINDS.get(exc.status_code, "http_error")
        headers = {k: v for k, v in (exc.headers or {}).items() if k.lower() == "allow"}
        return ApiError(exc.status_code, loc, message, kind, headers).response()

    app.add_exception_handler(ApiError, api_error)
    app.add_exception_handler(QueueFullError, queue_full)
    app.add_exception_handler(SynonymStoreError, store_failed)
    app.add_exception_handler(RequestValidationError, invalid)
    app.add_exception_handler(HTTPException, http_error)


def _item(error: Any) -> dict[str, Any]:
    """One of pydantic's errors as an ``ErrorItem`` (no echo of the input)."""
    loc = [p if isinstance(p, int) else str(p) for p in error.get("loc", ())]
    return {"loc": loc, "msg": str(error.get("msg", "")), "type": str(error.get("type", ""))}
