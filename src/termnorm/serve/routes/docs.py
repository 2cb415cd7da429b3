"""The API documentation pages, served with their own assets so they work offline.

FastAPI's ``/docs`` (Swagger UI) and ``/redoc`` (ReDoc) load their JavaScript, CSS and icon
from a CDN: on a machine without the internet they are blank. :func:`add_docs` serves the
same pages with the assets that the ``fastapi-offline`` package ships (in the ``serve``
extra), mounted at :data:`DOCS_ASSETS`, turns off Swagger UI's online validator badge, and
sends a Content-Security-Policy that keeps the browser from asking another host for
anything or running a script the page did not bring (:func:`content_security_policy`).
Build the app with ``docs_url=None, redoc_url=None`` and call :func:`add_docs` on it (it
mounts the assets and includes :data:`router`).
"""

from __future__ import annotations

import base64
import hashlib
import re
from pathlib import Path

from termnorm.errors import MissingExtraError

try:
    import fastapi_offline
    from fastapi import APIRouter, FastAPI, Request
    from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
    from fastapi.responses import HTMLResponse
    from fastapi.staticfiles import StaticFiles
except ImportError as exc:  # pragma: no cover - depends on the environment
    name = (exc.name or "fastapi").replace("fastapi_offline", "fastapi-offline")
    raise MissingExtraError(name, "serve") from exc

__all__ = ["ASSETS", "DOCS_ASSETS", "add_docs", "content_security_policy", "router"]

DOCS_ASSETS = "/docs-assets"
"""Where the documentation pages' assets are served."""

ASSETS = Path(fastapi_offline.__file__).with_name("static")
"""The folder of Swagger UI's and ReDoc's assets (swagger-ui-bundle.js, swagger-ui.css,
redoc.standalone.js, favicon.png)."""

_SWAGGER_PARAMETERS = {"validatorUrl": None}  # no badge fetched from validator.swagger.io

_POLICY = (
    "default-src 'self'; script-src 'self' {scripts}blob:; worker-src 'self' blob:; "
    "style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; "
    "object-src 'none'; base-uri 'none'; frame-ancestors 'none'"
)
_INLINE_SCRIPT = re.compile(rb"<script>(.*?)</script>", re.DOTALL)  # one without src


def content_security_policy(html: bytes) -> str:
    """The documentation page ``html``'s policy: the browser loads nothing from another host
    (ReDoc's menu shows a logo from its CDN otherwise; without it the logo is simply not
    shown), runs only the page's own inline scripts (allowed by their SHA-256) and the
    service's, and no other site frames the page. Styles may be inline: Swagger UI and ReDoc
    set them. Every other answer gets the service's own policy (serve/security_headers.py)."""
    hashes = (hashlib.sha256(body).digest() for body in _INLINE_SCRIPT.findall(html))
    scripts = "".join(f"'sha256-{base64.b64encode(h).decode('ascii')}' " for h in hashes)
    return _POLICY.format(scripts=scripts)


router = APIRouter()


def add_docs(app: FastAPI) -> None:
    """Serve Swagger UI at ``/docs`` and ReDoc at ``/redoc`` over the app's OpenAPI
    document, every asset from this service (:data:`DOCS_ASSETS`)."""
    if not (ASSETS / "swagger-ui-bundle.js").is_file():
        raise MissingExtraError("fastapi-offline (its static assets)", "serve")
    app.mount(DOCS_ASSETS, StaticFiles(directory=ASSETS), name="docs-assets")
    app.include_router(router)


@router.get("/docs", include_in_schema=False)
async def swagger_ui(request: Request) -> HTMLResponse:
    """Swagger UI, with the Content-Security-Policy."""
    app, root = request.app, request.scope.get("root_path", "")
    return _secured(
        get_swagger_ui_html(
            openapi_url=root + (app.openapi_url or "/openapi.json"),
            title=f"{app.title} - Swagger UI",
            swagger_js_url=f"{root}{DOCS_ASSETS}/swagger-ui-bundle.js",
            swagger_css_url=f"{root}{DOCS_ASSETS}/swagger-ui.css",
            swagger_favicon_url=f"{root}{DOCS_ASSETS}/favicon.png",
            swagger_ui_parameters={**(app.swagger_ui_parameters or {}), **_SWAGGER_PARAMETERS},
        )
    )


@router.get("/redoc", include_in_schema=False)
async def redoc(request: Request) -> HTMLResponse:
    """ReDoc, with the Content-Security-Policy."""
    app, root = request.app, request.scope.get("root_path", "")
    return _secured(
        get_redoc_html(
            openapi_url=root + (app.openapi_url or "/openapi.json"),
            title=f"{app.title} - ReDoc",
            redoc_js_url=f"{root}{DOCS_ASSETS}/redoc.standalone.js",
            redoc_favicon_url=f"{root}{DOCS_ASSETS}/favicon.png",
            with_google_fonts=False,
        )
    )


def _secured(page: HTMLResponse) -> HTMLResponse:
    page.headers["Content-Security-Policy"] = content_security_policy(bytes(page.body))
    return page
