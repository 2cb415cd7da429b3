"""What a route gets from its app, as FastAPI dependencies: the settings, the loaded state
(503 with ``Retry-After`` while loading or after a failed load), the micro-batcher and the
bearer-token check. The app factory keeps them in ``app.state`` (``settings``, ``runtime``,
``metrics``); routes never close over an app.

:func:`with_limits` gives a module-level endpoint one service's request limits (its body
model, a form field's bounds), so the limits are validated and stated in the OpenAPI page.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from termnorm.serve.batching import MicroBatcher
from termnorm.serve.errors import ApiError
from termnorm.serve.guards import token_problem
from termnorm.serve.settings import ServeSettings
from termnorm.serve.state import ServiceRuntime, ServiceState

__all__ = [
    "RETRY_LOADING",
    "app_batcher",
    "app_documents",
    "app_runtime",
    "app_settings",
    "authorized",
    "ready_state",
    "with_limits",
]

RETRY_LOADING = "2"  # seconds a client waits before asking again while the index loads

E = TypeVar("E", bound=Callable[..., Awaitable[Any]])


def app_settings(request: Request) -> ServeSettings:
    """The settings the app was created with."""
    return request.app.state.settings  # type: ignore[no-any-return]


def app_runtime(request: Request) -> ServiceRuntime:
    """What the app's lifespan set up."""
    return request.app.state.runtime  # type: ignore[no-any-return]


def ready_state(runtime: ServiceRuntime = Depends(app_runtime)) -> ServiceState:
    """The loaded state; :class:`ApiError` 503 (``loading`` or ``failed``, the reason with
    the server's paths cut to their last part, as ``/v1/ready`` shows it) before it."""
    if runtime.state is None:
        status = "failed" if runtime.error is not None else "loading"
        message = runtime.public_error() or "the index is loading; retry shortly"
        raise ApiError(503, [], message, status, headers={"Retry-After": RETRY_LOADING})
    return runtime.state


def app_batcher(runtime: ServiceRuntime = Depends(app_runtime)) -> MicroBatcher[str, Any]:
    """The micro-batcher (started with the app)."""
    assert runtime.batcher is not None
    return runtime.batcher


def app_documents(runtime: ServiceRuntime = Depends(app_runtime)) -> MicroBatcher[Any, Any]:
    """The micro-batcher of annotate's documents (started with the app)."""
    assert runtime.documents is not None
    return runtime.documents


_bearer = HTTPBearer(auto_error=False, description="The token given at start (--token).")


def authorized(
    credentials: HTTPAuthorizationCredentials | None = Depends(_bearer),
    settings: ServeSettings = Depends(app_settings),
) -> None:
    """Raise unless the bearer token is the service's. TokenGuard has checked the raw header
    before the body was read; this states the security scheme in the OpenAPI page and checks
    again (headers arrive as latin-1)."""
    given = credentials.credentials.encode("latin-1") if credentials is not None else b""
    error = token_problem(settings.token, b"Bearer " + given)
    if error is not None:
        raise error


def with_limits(endpoint: E, **annotations: Any) -> E:
    """``endpoint`` with the named parameters annotated anew (a service's request model, an
    ``Annotated`` form field with its bounds); everything else, its name included, kept."""

    @functools.wraps(endpoint)
    async def limited(*args: Any, **kwargs: Any) -> Any:
        return await endpoint(*args, **kwargs)

    signature = inspect.signature(endpoint)
    limited.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[
            p.replace(annotation=annotations.get(p.name, p.annotation))
            for p in signature.parameters.values()
        ]
    )
    return limited  # type: ignore[return-value]
