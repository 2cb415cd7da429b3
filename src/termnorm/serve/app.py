"""The app factory: :func:`create_app` builds the FastAPI app of the service.

Nothing is loaded when the app is built or this module imported. At start-up (the ASGI
lifespan) the micro-batcher starts and the index, its encoder and the stored domain
synonyms load on a background thread: ``GET /v1/ready`` answers 503 ``{"status":
"loading"}`` until then, 200 with what is served after, and 503 ``{"status": "failed"}``
with the reason when loading failed; ``GET /v1/health`` answers 200 as soon as the process
serves. Endpoints that need the index answer 503 with ``Retry-After`` while it loads.

Every error is ``ErrorOut`` (``{"detail": [{"loc", "msg", "type"}]}``, serve/errors.py): a
malformed body, a wrong type, an empty, blank, over-long or unencodable text, more texts
than ``max_batch``, an unknown strategy, namespace or type are 422 naming the field; an
unknown route, or concept (in the path or a synonym pair) 404; a body above its limit 413;
a full encoding queue 503 with ``Retry-After``. Adding synonyms needs ``Authorization: Bearer TOKEN``, checked before the
body is read (401 without it or with another token; 403 when the service was started
without a token). The ``Host`` and ``Origin`` checks against DNS rebinding and cross-site
forms (421, 403; 400 for a malformed ``Host``) run first, then a path with a control
character is answered 404 saying so (serve/guards.py). Anonymous answers name the index, model and
synonym files, never their absolute paths, the 503s after a failed load included. ``OPTIONS``
on a route answers 204 with ``Allow`` listing every method of its path, and ``HEAD`` answers
wherever ``GET`` does (serve/allow.py).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from termnorm.errors import MissingExtraError
from termnorm.search.spec import PipelineSpec

try:
    import python_multipart  # noqa: F401  # form bodies: the file upload
    from fastapi import FastAPI
    from fastapi.staticfiles import StaticFiles
except ImportError as exc:  # pragma: no cover - depends on the environment
    name = (exc.name or "fastapi").replace("python_multipart", "python-multipart")
    raise MissingExtraError(name, "serve") from exc

from termnorm.serve.allow import HeadAsGet
from termnorm.serve.batching import MicroBatcher
from termnorm.serve.errors import ApiError, add_error_handlers
from termnorm.serve.guards import (
    BodyCap,
    BodyLimit,
    PathGuard,
    SiteGuard,
    TokenGuard,
    normalize_origin,
)
from termnorm.serve.metrics import Metrics, MetricsMiddleware
from termnorm.serve.routes import annotate, concepts, search, service
from termnorm.serve.routes.docs import add_docs
from termnorm.serve.schemas import ErrorOut
from termnorm.serve.security_headers import SecurityHeaders
from termnorm.serve.settings import ServeSettings
from termnorm.serve.state import ServiceRuntime, ServiceState, load_space
from termnorm.serve.uploads import UPLOAD_PATH

__all__ = ["ApiError", "create_app"]

logger = logging.getLogger(__name__)

_SPEC_FIELDS = frozenset(f.name for f in dataclasses.fields(PipelineSpec)) - {"synonyms", "index"}

_ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorOut, "description": text}
    for code, text in (
        (400, "The request body cannot be read."),
        (401, "Missing or wrong bearer token."),
        (
            403,
            "A cross-origin request (see --allow-origin), or adding synonyms while it is "
            "disabled (no token given at start).",
        ),
        (404, "Unknown route, or an unknown concept (in the path or a synonym pair)."),
        (405, "Method not allowed on this route."),
        (
            413,
            "A request body, an upload's rows or columns, or an annotate request's "
            "characters, above the server's limits.",
        ),
        (415, "A JSON body sent without 'Content-Type: application/json'."),
        (421, "The Host header does not name this server (see --allow-host)."),
        (422, "A field is not valid (named in loc)."),
        (503, "Loading, or the encoding or annotate queue is full (see Retry-After)."),
    )
}


def create_app(
    index: str | Path | None = None,
    synonyms: str | Path | None = None,
    token: str | None = None,
    *,
    spec: PipelineSpec | None = None,
    synonym_files: Sequence[str | Path] = (),
    **options: Any,
) -> FastAPI:
    """The service's app over ``index`` (a folder; ``None``: the spec's, else the default).

    ``synonyms``: the JSONL store of domain synonyms (loaded at start-up when it exists,
    appended to by ``POST /v1/synonyms``); ``token``: the bearer token that adding synonyms
    requires (``None``: adding is disabled). ``spec``: the pipeline spec of every search
    (default ``PipelineSpec()``), with ``index``, ``synonym_files`` (its read-only
    ``synonyms``) and the ``options`` named as its fields (``ranker``, ``k_c``,
    ``combiner``, ``max_chars``, ...) set on it; the other ``options`` are
    :class:`~termnorm.serve.settings.ServeSettings` fields (``max_batch``,
    ``micro_batching``, ...). Nothing is loaded until the app starts.
    """
    changes = {name: options.pop(name) for name in list(options) if name in _SPEC_FIELDS}
    if index is not None:
        changes["index"] = Path(index)
    if synonym_files:
        changes["synonyms"] = tuple(synonym_files)
    settings = ServeSettings(
        spec=(spec or PipelineSpec()).replace(**changes),
        synonym_store=Path(synonyms) if synonyms is not None else None,
        token=token,
        **options,
    )
    metrics = Metrics()
    app = FastAPI(
        title="termnorm",
        summary="Normalize medical terms to concept IDs.",
        version="1",
        lifespan=_lifespan,
        responses=_ERRORS,
        docs_url=None,  # add_docs: the same pages with local assets (offline)
        redoc_url=None,
    )
    app.state.runtime = ServiceRuntime()
    app.state.settings = settings
    app.state.metrics = metrics
    app.add_middleware(HeadAsGet, router=app.router)  # innermost: the guards see HEAD
    _add_guards(app, settings)
    app.add_middleware(SecurityHeaders)  # its refusals too: no framing, no sniffing, a CSP
    app.add_middleware(MetricsMiddleware, metrics=metrics)  # outermost: counts every answer
    add_error_handlers(app)
    app.include_router(service.router)
    app.include_router(search.router(settings))
    app.include_router(annotate.router(settings))
    app.include_router(concepts.router(settings))
    app.mount("/static", StaticFiles(directory=service.STATIC), name="static")
    if settings.project is not None:  # a mapping project's review page (routes/review.py)
        from termnorm.serve.routes import review

        app.include_router(review.router)
    add_docs(app)
    return app


@asynccontextmanager
async def _lifespan(app: FastAPI) -> AsyncIterator[None]:
    """Start the micro-batchers and load the index in the background; stop them at the end."""
    settings, runtime = app.state.settings, app.state.runtime
    batcher = _batcher(settings, runtime, app.state.metrics)
    runtime.batcher = batcher
    runtime.documents = annotate.document_batcher(settings, batcher)
    batcher.start()
    runtime.documents.start()
    loading = asyncio.get_running_loop().create_task(_load(settings, runtime))
    try:
        yield
    finally:
        loading.cancel()
        await runtime.documents.stop()
        await batcher.stop()


def _batcher(
    settings: ServeSettings, runtime: ServiceRuntime, metrics: Metrics
) -> MicroBatcher[str, Any]:
    def encode(texts: list[str]) -> Any:  # on the encoding thread: no request's sender
        assert runtime.state is not None
        return runtime.state.space.encode_queries(texts)

    on = settings.micro_batching
    batcher = MicroBatcher(
        encode,
        max_texts=settings.batch_texts if on else 1,
        max_wait_s=settings.batch_wait_ms / 1000 if on else 0.0,
        max_queued=settings.queue_texts,
        on_batch=metrics.batch_texts.observe,
    )
    metrics.queue_texts.set_function(lambda: batcher.queued)
    return batcher


async def _load(settings: ServeSettings, runtime: ServiceRuntime) -> None:
    what = "the index"
    try:
        space, stored = await asyncio.to_thread(load_space, settings)
        state = ServiceState(settings, space, stored.skipped)
        what = "the pipeline"  # its cards and ranker, refused when made on another index
        await asyncio.to_thread(state.pipeline, settings.spec)
    except Exception as exc:  # not a cancellation: that is a BaseException
        logger.exception("loading %s failed", what)
        runtime.error = f"{type(exc).__name__}: {exc}"
        return
    runtime.state = state
    logger.info("ready: %s", runtime.state.info())


def _add_guards(app: FastAPI, settings: ServeSettings) -> None:
    """The checks that run before routing, innermost first: body size, token, path, site."""
    json_cap = BodyCap(
        settings.max_json_bytes,
        "send fewer or shorter texts (the server's --max-batch and --max-chars)",
        ["body"],
    )
    upload_cap = BodyCap(
        settings.max_upload_bytes,
        "split the file, or start the server with a larger --max-upload-mb",
        ["body", "file"],
    )
    annotate_cap = BodyCap(
        settings.max_annotate_bytes,
        "send fewer or shorter documents (the server's --max-documents and --max-annotate-chars)",
        ["body"],
    )
    app.add_middleware(
        BodyLimit,
        default=json_cap,
        caps={UPLOAD_PATH: upload_cap, annotate.ANNOTATE_PATH: annotate_cap},
    )
    app.add_middleware(
        TokenGuard, token=settings.token, paths=frozenset({("POST", concepts.SYNONYMS_PATH)})
    )
    app.add_middleware(PathGuard)
    origins = frozenset(normalize_origin(o) for o in settings.allow_origins)  # ValueError now
    app.add_middleware(SiteGuard, settings=settings, origins=origins)
