"""The headers that keep the service's pages from being framed, sniffed or injected into.

:class:`SecurityHeaders` (ASGI middleware) adds to every HTTP answer, refusals of the
guards included:

- ``X-Frame-Options: DENY`` and ``X-Content-Type-Options: nosniff``;
- the Content-Security-Policy :data:`PAGE_POLICY`, unless the answer carries its own
  policy (the API documentation pages do: routes/docs.py). The pages at
  ``/`` and ``/review`` load their scripts and styles from ``/static`` and ``/review``,
  have no inline script or style and call only this service, so the policy allows nothing
  else; ``frame-ancestors 'none'`` is what browsers that know it obey instead of
  ``X-Frame-Options``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["PAGE_POLICY", "SecurityHeaders"]

PAGE_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)
"""The Content-Security-Policy of every answer that sets none itself."""

_CSP = b"content-security-policy"
_ALWAYS = ((b"x-frame-options", b"DENY"), (b"x-content-type-options", b"nosniff"))


def secured(headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    """``headers`` (an ASGI answer's) with :data:`_ALWAYS` replacing any of the same name,
    and :data:`PAGE_POLICY` as Content-Security-Policy where they name none."""
    names = {name for name, _ in _ALWAYS}
    kept = [(name, value) for name, value in headers if name.lower() not in names]
    if not any(name.lower() == _CSP for name, _ in kept):
        kept.append((_CSP, PAGE_POLICY.encode("ascii")))
    return [*kept, *_ALWAYS]


class SecurityHeaders:
    """ASGI middleware: :func:`secured` headers on every HTTP answer of the app it wraps."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_secured(message: Any) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": secured(list(message.get("headers") or []))}
            await send(message)

        await self.app(scope, receive, send_secured)
