"""What a path allows: the ``Allow`` header of a 405 and of an ``OPTIONS`` answer.

Starlette answers a method a path lacks with the ``Allow`` of the first route whose path
matches, so a path served by two routes (``POST`` and ``DELETE .../lease``) named only one.
:func:`allowed_methods` asks every route of the app instead, method by method, so ``Allow``
lists every method the path has (``OPTIONS`` among them: the service answers it with 204).

:class:`HeadAsGet` answers ``HEAD`` wherever a route takes ``GET`` (the GET's status and
headers, no body), as Starlette's own routes and the static files do: FastAPI's routes take
only the methods they name, so ``HEAD /v1/health`` was a 405. ``HEAD`` is not an operation of
its own in the OpenAPI document: it goes with every ``GET``.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.routing import Match, Mount, Router

from termnorm.serve.metrics import KNOWN_METHODS

__all__ = ["HeadAsGet", "allowed_methods"]


def allowed_methods(request: Request, own: str | None = None) -> list[str]:
    """The methods some route of the app takes on ``request``'s path, sorted, with
    ``OPTIONS``; ``own`` is the ``Allow`` the refusing route gave (a mount's, such as the
    static files' ``GET, HEAD``: a mount matches every method, so its own word counts)."""
    scope = request.scope
    root = scope.get("app_root_path", scope.get("root_path", ""))  # before a mount's
    routes = [r for r in request.app.router.routes if not isinstance(r, Mount)]
    allowed = {m.strip().upper() for m in (own or "").split(",") if m.strip()}
    for method in KNOWN_METHODS - allowed:
        probe = {**scope, "method": method, "root_path": root}
        if any(route.matches(probe)[0] is Match.FULL for route in routes):
            allowed.add(method)
    if "GET" in allowed:
        allowed.add("HEAD")  # HeadAsGet
    return sorted(allowed | {"OPTIONS"})


class HeadAsGet:
    """ASGI middleware: ``HEAD`` on a path that a route of ``router`` takes ``GET`` on is
    answered as that ``GET``, without the body (RFC 9110 9.3.2); mounts (the static files)
    answer ``HEAD`` themselves."""

    def __init__(self, app: Any, router: Router) -> None:
        self.app = app
        self.router = router

    def _takes_get(self, scope: Any) -> bool:
        probe = {**scope, "method": "GET"}
        return any(
            route.matches(probe)[0] is Match.FULL
            for route in self.router.routes
            if not isinstance(route, Mount)
        )

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "HEAD" or not self._takes_get(scope):
            await self.app(scope, receive, send)
            return

        async def headers_only(message: Any) -> None:
            if message["type"] == "http.response.body":
                message = {**message, "body": b""}  # Content-Length stays the GET's
            await send(message)

        await self.app({**scope, "method": "GET"}, receive, headers_only)
