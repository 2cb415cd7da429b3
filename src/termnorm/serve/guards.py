"""ASGI guards that run before routing and before any body byte is read.

* :class:`SiteGuard` defeats DNS rebinding and cross-site forms. The ``Host`` header must
  name this server: an IP literal, ``localhost``, the ``--host`` it listens on, or a name
  given with ``--allow-host`` (else 421); a ``Host`` that is not ``name[:port]`` (``[::1``,
  ``127.0.0.1/x``) is refused (400). A browser request that changes something (any
  method but GET, HEAD and OPTIONS) carrying an ``Origin`` must come from the service's own
  origin (the ``Host`` it was sent to) or one given with ``--allow-origin`` (else 403).
  Requests without ``Origin`` (curl, scripts, other servers) are not cross-site and pass.
  A request with two ``Host`` or two ``Origin`` headers is refused (400): only one is checked.
* :class:`PathGuard` answers a path with a control character (``%0A`` in a concept ID) 404
  saying so (no concept ID, row code or route has one), where routing would drop a
  trailing newline or answer "no such route".
* :class:`TokenGuard` checks the bearer token of the paths that need one (403 when the
  service has none, 401 when it is missing or wrong), so an anonymous body is never parsed.
  Tokens are compared as UTF-8 bytes in constant time: non-ASCII tokens work.
* :class:`BodyLimit` caps request bodies: a declared ``Content-Length`` above the limit is
  answered 413 at once, a body that grows past it is cut (413). The file upload has its own
  limit (``--max-upload-mb``), JSON bodies one derived from ``--max-batch`` and
  ``--max-chars``.
"""

from __future__ import annotations

import hmac
import ipaddress
from typing import Any, NamedTuple
from urllib.parse import quote, urlsplit

from starlette.exceptions import HTTPException

from termnorm.serve.errors import ApiError, clip
from termnorm.serve.settings import ServeSettings

__all__ = [
    "BodyCap",
    "BodyLimit",
    "BodyTooLarge",
    "PathGuard",
    "SiteGuard",
    "TokenGuard",
    "host_allowed",
    "normalize_origin",
    "token_problem",
]

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
_LOCAL_NAMES = frozenset({"localhost", "localhost.localdomain"})
_DEFAULT_PORTS = {"http": 80, "https": 443}


def _split_host(value: str, scheme: str) -> tuple[str, int | None]:
    """``(name, port)`` of a ``Host`` header or an authority (``[::1]:8000`` → ``::1``);
    ``ValueError`` when ``value`` is not ``name[:port]`` (an unclosed ``[``, a path, a user,
    a port that is not a number)."""
    parts = urlsplit(f"{scheme}://{value.strip()}")  # ValueError on "[::1"
    port = parts.port  # ValueError on "host:abc"
    if parts.path or parts.query or parts.fragment or "@" in parts.netloc:
        raise ValueError(f"{value!r} is not host[:port]")
    return (parts.hostname or "").rstrip("."), port or _DEFAULT_PORTS.get(scheme)


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def host_allowed(name: str, settings: ServeSettings) -> bool:
    """Whether ``name`` (a ``Host`` header's name, lower case, no port) is this server's:
    an IP literal (a rebinding attack needs a DNS name), ``localhost``, ``--host`` or an
    ``--allow-host`` name (``"*"`` allows any)."""
    allowed = {h.lower().rstrip(".") for h in settings.allow_hosts}
    if "*" in allowed or _is_ip(name) or name in _LOCAL_NAMES:
        return True
    return name == settings.host.lower().strip("[]") or name in allowed


def normalize_origin(origin: str) -> str:
    """``scheme://host[:port]`` in lower case, the default port dropped; ``ValueError``
    naming the expected form when ``origin`` is not one (``"*"`` is kept)."""
    origin = origin.strip().rstrip("/")
    if origin == "*":
        return origin
    try:
        parts = urlsplit(origin.lower())
        if parts.scheme not in _DEFAULT_PORTS or not parts.hostname or parts.path or parts.query:
            raise ValueError(origin)
        host, port = _split_host(parts.netloc, parts.scheme)
    except ValueError:
        raise ValueError(
            f"{origin!r} is not a web origin: give scheme://host[:port], e.g. "
            "https://app.example or http://localhost:3000"
        ) from None
    shown = f"[{host}]" if ":" in host else host
    return f"{parts.scheme}://{shown}" + (
        "" if port == _DEFAULT_PORTS[parts.scheme] else f":{port}"
    )


def _header(scope: Any, name: bytes) -> bytes | None:
    for key, value in scope.get("headers") or ():
        if key.lower() == name:
            return bytes(value)
    return None


def _repeated(scope: Any, names: tuple[bytes, ...]) -> ApiError | None:
    """A 400 when one of the headers ``names`` (lower case) comes more than once: the checks
    read one, and a second could say something else to whatever reads the other."""
    for name in names:
        count = sum(1 for key, _ in scope.get("headers") or () if key.lower() == name)
        if count > 1:
            shown = name.decode("ascii").title()
            return ApiError(
                400,
                ["header", shown],
                f"the request carries {count} {shown} headers; send one (a browser always does)",
                "repeated_header",
            )
    return None


async def _refuse(scope: Any, receive: Any, send: Any, error: ApiError) -> None:
    """Answer ``error`` without reading the body; the connection is then closed."""
    await error.response(Connection="close")(scope, receive, send)


class SiteGuard:
    """ASGI middleware: the ``Host`` and ``Origin`` checks (see the module docstring)."""

    def __init__(self, app: Any, settings: ServeSettings, origins: frozenset[str]) -> None:
        self.app = app
        self.settings = settings
        self.origins = origins  # normalized (normalize_origin)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        error = self.problem(scope)
        if error is not None:
            await _refuse(scope, receive, send, error)
            return
        await self.app(scope, receive, send)

    def problem(self, scope: Any) -> ApiError | None:
        """Why this request is refused, or ``None``."""
        repeated = _repeated(scope, (b"host", b"origin"))
        if repeated is not None:
            return repeated
        scheme = scope.get("scheme", "http")
        raw_host = (_header(scope, b"host") or b"").decode("latin-1")
        try:
            name = _split_host(raw_host, scheme)[0]
        except ValueError:
            return ApiError(
                400,
                ["header", "Host"],
                f"the Host header {clip(raw_host)} is not a host name with an optional port "
                "(host[:port], an IPv6 address in brackets: [::1]:8000); fix the client",
                "bad_host",
            )
        if raw_host and not host_allowed(name, self.settings):
            return ApiError(
                421,
                ["header", "Host"],
                f"this server does not answer to the name {name[:100]!r} (a page on another "
                "site may be trying to reach it through DNS rebinding); use 127.0.0.1 or "
                "localhost, or start the server with --allow-host NAME",
                "untrusted_host",
            )
        origin = _header(scope, b"origin")
        if origin is None or scope["method"] in SAFE_METHODS or "*" in self.origins:
            return None
        shown = origin.decode("latin-1")
        try:
            given = normalize_origin(shown)
        except ValueError:
            given = shown  # "null" (a sandboxed page, a file): never the service's own
        own = normalize_origin(f"{scheme}://{raw_host}") if raw_host else None
        if given == own or given in self.origins:
            return None
        return ApiError(
            403,
            ["header", "Origin"],
            f"cross-origin request from {shown[:100]!r} refused: a web page of another site "
            "cannot send data to this service; start the server with --allow-origin ORIGIN "
            "to allow that site",
            "cross_origin",
        )


def _control_character(path: str) -> tuple[int, str] | None:
    """The position and character of the first control character (C0, DEL, C1) of ``path``."""
    for i, char in enumerate(path):
        if char < " " or "\x7f" <= char <= "\x9f":
            return i, char
    return None


class PathGuard:
    """ASGI middleware: 404 for a path with a control character (see the module docstring):
    no concept ID, row code or route has one, so nothing there can be found."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        found = _control_character(scope["path"]) if scope["type"] == "http" else None
        if found is None:
            await self.app(scope, receive, send)
            return
        at, char = found
        error = ApiError(
            404,
            ["path"],
            f"the path {clip(scope['path'])} contains the control character U+{ord(char):04X} "
            f"at character {at} ({quote(char)} in the URL): no concept ID, row code or route "
            "has one; remove it (a pasted line break?) and send the request again",
            "control_character",
        )
        await _refuse(scope, receive, send, error)


def token_problem(token: str | None, given: bytes | None) -> ApiError | None:
    """Why ``given`` (an ``Authorization`` header's bytes) does not unlock an endpoint that
    needs ``token`` (``None``: such endpoints are off), or ``None``."""
    if token is None:
        return ApiError(
            403,
            ["header", "Authorization"],
            "adding synonyms is disabled: start the server with a token (--token)",
            "disabled",
        )
    scheme, _, credentials = (given or b"").strip().partition(b" ")
    ok = scheme.lower() == b"bearer" and hmac.compare_digest(
        credentials.strip(), token.encode("utf-8")
    )
    if ok:
        return None
    return ApiError(
        401,
        ["header", "Authorization"],
        "missing or wrong token: send 'Authorization: Bearer TOKEN' with the token the server "
        "was started with",
        "unauthorized",
        headers={"WWW-Authenticate": "Bearer"},
    )


class TokenGuard:
    """ASGI middleware: the bearer token of ``paths`` (``(method, path)``), checked before
    the body is read."""

    def __init__(self, app: Any, token: str | None, paths: frozenset[tuple[str, str]]) -> None:
        self.app = app
        self.token = token
        self.paths = paths

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and (scope["method"], scope["path"]) in self.paths:
            error = token_problem(self.token, _header(scope, b"authorization"))
            if error is not None:
                await _refuse(scope, receive, send, error)
                return
        await self.app(scope, receive, send)


class BodyTooLarge(HTTPException):
    """A body grew past its limit while it was read (answered 413, ``loc`` naming it)."""

    def __init__(self, message: str, loc: list[str | int]) -> None:
        super().__init__(413, message)
        self.loc = loc


class BodyCap(NamedTuple):
    """A body limit in bytes, what to do about a 413, and the field it names."""

    limit: int
    advice: str
    loc: list[str | int]


def _size(limit: int) -> str:
    mib = limit / (1 << 20)
    return f"{mib:g} MiB ({limit} bytes)" if limit >= 1 << 20 else f"{limit} bytes"


class BodyLimit:
    """ASGI middleware: the body of a request to ``path`` is capped by ``caps[path]``, or
    ``default`` on other paths."""

    def __init__(self, app: Any, default: BodyCap, caps: dict[str, BodyCap]) -> None:
        self.app = app
        self.default = default
        self.caps = caps

    @staticmethod
    def message(cap: BodyCap) -> str:
        """What a 413 says."""
        return f"the request body is larger than the limit of {_size(cap.limit)}; {cap.advice}"

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        cap = self.caps.get(scope["path"], self.default)
        declared = _header(scope, b"content-length")
        if declared is not None and declared.strip().isdigit() and int(declared) > cap.limit:
            error = ApiError(413, cap.loc, self.message(cap), "too_large")
            await _refuse(scope, receive, send, error)
            return
        received = 0

        async def limited() -> Any:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > cap.limit:
                    raise BodyTooLarge(self.message(cap), cap.loc)
            return message

        await self.app(scope, limited, send)
