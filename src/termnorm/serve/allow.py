"""What a path allows: the ``Allow`` header of a 405 and of an ``OPTIONS`` answer.

Starlette answers a method a path lacks with the ``Allow`` of the first route whose path
matches, so a path served by two routes (``POST`` and ``DELETE .../lease``) named only one.
:func:`allowed_methods` asks every route of the app instead, method by method, so ``Allow``
lists every method the path has (``OPTIONS`` among them: the service answers it with 204).
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.routing import Match, Mount

from termnorm.serve.metrics import KNOWN_METHODS

__all__ = ["allowed_methods"]


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
    return sorted(allowed | {"OPTIONS"})
