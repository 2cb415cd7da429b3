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
forms (421, 403) run first (serve/guards.py). Anonymous answers name the index, model and
synonym files, never their absolute paths.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import shutil
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from termnorm.errors import MissingExtraError

try:
    import python_multipart  # noqa: F401  # form bodies: the file upload
    from fastapi import Depends, FastAPI, File, Form, Query, Request, UploadFile
    from fastapi.responses import FileResponse, JSONResponse, Response
    from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
    from fastapi.staticfiles import StaticFiles
    from starlette.background import BackgroundTask
    from starlette.concurrency import run_in_threadpool
except ImportError as exc:  # pragma: no cover - depends on the environment
    name = (exc.name or "fastapi").replace("python_multipart", "python-multipart")
    raise MissingExtraError(name, "serve") from exc

from termnorm.index.lookup import UnknownConceptError
from termnorm.search.candidate import RowResult
from termnorm.search.query import query_problem
from termnorm.serve.batching import MicroBatcher
from termnorm.serve.docs import add_docs
from termnorm.serve.errors import ApiError, add_error_handlers, redact_paths
from termnorm.serve.guards import (
    BodyCap,
    BodyLimit,
    SiteGuard,
    TokenGuard,
    normalize_origin,
    token_problem,
)
from termnorm.serve.metrics import CONTENT_TYPE_LATEST, Metrics, MetricsMiddleware
from termnorm.serve.schemas import (
    ConceptOut,
    ErrorOut,
    HealthOut,
    NormalizeOut,
    ReadyOut,
    SynonymsOut,
    request_models,
)
from termnorm.serve.settings import ServeSettings
from termnorm.serve.state import FieldError, ServiceState, load_ranking, load_space
from termnorm.serve.uploads import (
    UPLOAD_FORMATS,
    UPLOAD_PATH,
    QueuedMatcher,
    UploadCancelled,
    UploadLimits,
    UploadProblem,
    map_upload,
    queued_encoder,
    watch_disconnect,
)

__all__ = ["ApiError", "create_app"]

logger = logging.getLogger(__name__)

STATIC = Path(__file__).with_name("static")
SYNONYMS = "/v1/synonyms"
_RETRY_LOADING = "2"
MAX_RELATIONS = 1000  # most KG edges one concept answer may carry


@dataclass
class _Runtime:
    """What the lifespan sets up: the loaded state (or why not) and the batcher."""

    state: ServiceState | None = None
    error: str | None = None
    batcher: MicroBatcher | None = None


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
        (413, "A request body, or an upload's rows or columns, above the server's limits."),
        (421, "The Host header does not name this server (see --allow-host)."),
        (422, "A field is not valid (named in loc)."),
        (503, "Loading, or the encoding queue is full (see Retry-After)."),
    )
}


def create_app(
    index: str | Path | None = None,
    synonyms: str | Path | None = None,
    token: str | None = None,
    **options: Any,
) -> FastAPI:
    """The service's app over ``index`` (a folder; ``None``: the default HPO index).

    ``synonyms``: the JSONL store of domain synonyms (loaded at start-up when it exists,
    appended to by ``POST /v1/synonyms``); ``token``: the bearer token that adding synonyms
    requires (``None``: adding is disabled). ``options`` are the other
    :class:`~termnorm.serve.settings.ServeSettings` fields (``max_batch``, ``max_chars``,
    ``micro_batching``, ...). Nothing is loaded until the app starts.
    """
    settings = ServeSettings(
        index=Path(index) if index is not None else None,
        synonyms=Path(synonyms) if synonyms is not None else None,
        token=token,
        **options,
    )
    runtime = _Runtime()
    metrics = Metrics()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        batcher = _batcher(settings, runtime, metrics)
        runtime.batcher = batcher
        batcher.start()
        loading = asyncio.get_running_loop().create_task(_load(settings, runtime))
        try:
            yield
        finally:
            loading.cancel()
            await batcher.stop()

    app = FastAPI(
        title="termnorm",
        summary="Normalize medical terms to concept IDs.",
        version="1",
        lifespan=lifespan,
        responses=_ERRORS,
        docs_url=None,  # add_docs: the same pages with local assets (offline)
        redoc_url=None,
    )
    app.state.runtime = runtime
    app.state.settings = settings
    app.state.metrics = metrics
    _add_guards(app, settings)
    app.add_middleware(MetricsMiddleware, metrics=metrics)  # outermost: counts every answer
    add_error_handlers(app)
    _add_routes(app, settings, runtime, metrics)
    if settings.project is not None:  # a mapping project's review page (serve/review.py)
        from termnorm.serve.review import router as review_router

        app.include_router(review_router)
    add_docs(app)
    return app


def _batcher(settings: ServeSettings, runtime: _Runtime, metrics: Metrics) -> MicroBatcher:
    def encode(texts: list[str]) -> Any:
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


async def _load(settings: ServeSettings, runtime: _Runtime) -> None:
    try:
        space, stored = await asyncio.to_thread(load_space, settings)
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        logger.exception("loading the index failed")
        runtime.error = f"{type(exc).__name__}: {exc}"
        return
    try:
        ranking = await asyncio.to_thread(load_ranking, settings, space)
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        logger.exception("loading the ranker failed")
        runtime.error = f"{type(exc).__name__}: {exc}"
        return
    runtime.state = ServiceState(settings, space, ranking, stored.skipped)
    logger.info("ready: %s", runtime.state.info())


def _add_guards(app: FastAPI, settings: ServeSettings) -> None:
    """The checks that run before routing, innermost first: body size, token, site."""
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
    app.add_middleware(BodyLimit, default=json_cap, caps={UPLOAD_PATH: upload_cap})
    app.add_middleware(TokenGuard, token=settings.token, paths=frozenset({("POST", SYNONYMS)}))
    origins = frozenset(normalize_origin(o) for o in settings.allow_origins)  # ValueError now
    app.add_middleware(SiteGuard, settings=settings, origins=origins)


def _add_routes(app: FastAPI, settings: ServeSettings, runtime: _Runtime, metrics: Metrics) -> None:
    def ready_state() -> ServiceState:
        if runtime.state is None:
            status = "failed" if runtime.error is not None else "loading"
            message = runtime.error or "the index is loading; retry shortly"
            raise ApiError(503, [], message, status, headers={"Retry-After": _RETRY_LOADING})
        return runtime.state

    bearer = HTTPBearer(auto_error=False, description="The token given at start (--token).")

    def authorized(
        credentials: HTTPAuthorizationCredentials | None = Depends(bearer),
    ) -> None:
        # TokenGuard has checked the raw header before the body was read; this states the
        # security scheme in the OpenAPI page and checks again (headers arrive as latin-1).
        given = credentials.credentials.encode("latin-1") if credentials is not None else b""
        error = token_problem(settings.token, b"Bearer " + given)
        if error is not None:
            raise error

    upload_limits = UploadLimits(settings.max_upload_rows, settings.max_upload_columns)
    normalize_in, synonyms_in = request_models(
        settings.max_batch, settings.max_chars, settings.max_k
    )

    @app.get("/v1/health", response_model=HealthOut, tags=["service"])
    async def health() -> HealthOut:
        """The process is alive (says nothing about the index: see ``/v1/ready``)."""
        return HealthOut()

    @app.get("/v1/ready", response_model=ReadyOut, tags=["service"])
    async def ready() -> JSONResponse:
        """200 with what is served once the index is loaded; 503 while loading or failed."""
        if runtime.state is not None:
            return JSONResponse(ReadyOut(status="ready", **runtime.state.info()).model_dump())
        if runtime.error is not None:
            body = ReadyOut(status="failed", error=redact_paths(runtime.error))
        else:
            body = ReadyOut(status="loading")
        return JSONResponse(
            body.model_dump(exclude_none=True),
            status_code=503,
            headers={"Retry-After": _RETRY_LOADING},
        )

    async def normalize(body: Any, state: ServiceState = Depends(ready_state)) -> NormalizeOut:
        """The top-``k`` concepts of each text, with the provenance of each candidate."""
        problems = [
            {"loc": ["body", "texts", i], "msg": p, "type": "value_error"}
            for i, text in enumerate(body.texts)
            if (p := query_problem(text, settings.max_chars)) is not None
        ]
        if problems:
            return JSONResponse({"detail": problems}, status_code=422)  # type: ignore[return-value]
        learned = state.ranks_by_probability  # min_score is then the combiner's probability
        matcher = await run_in_threadpool(
            state.matcher, body.strategy, None if learned else body.min_score, body.namespaces,
            body.semantic_types,
        )  # fmt: skip
        queries = [t.strip() for t in body.texts]
        assert runtime.batcher is not None
        vectors = await runtime.batcher.encode(queries)
        ranked = state.ranked(matcher, body.multi, body.min_score if learned else None)
        if ranked is None:
            rows = [
                RowResult(c)
                for c in await run_in_threadpool(matcher.search_vectors, vectors, body.k)
            ]
            name = matcher.name
        else:
            recalled = await run_in_threadpool(
                matcher.search_vectors, vectors, max(body.k, ranked.k_c)
            )
            rows = await run_in_threadpool(
                ranked.rerank_rows, queries, [RowResult(c) for c in recalled], body.k
            )
            name = ranked.name
        abstained = None if body.min_score is None else f"no concept scored >= {body.min_score:g}"
        return NormalizeOut.model_validate(
            {
                "strategy": name,
                "k": body.k,
                "results": [
                    {
                        "text": text,
                        "candidates": [c.to_dict() for c in row.candidates],
                        "abstained": None if row.candidates else abstained,
                        "concept_ids": None if row.concept_ids is None else list(row.concept_ids),
                        "implication": row.implication,
                    }
                    for text, row in zip(body.texts, rows, strict=True)
                ],
            }
        )

    normalize.__annotations__["body"] = normalize_in  # this service's limits in the schema
    app.post("/v1/normalize", response_model=NormalizeOut, tags=["normalize"])(normalize)

    @app.get("/v1/concepts/{concept_id:path}", response_model=ConceptOut, tags=["concepts"])
    async def concept(
        concept_id: str,
        relations_limit: int = Query(
            100, ge=0, le=MAX_RELATIONS, description="Most KG edges to return."
        ),
        state: ServiceState = Depends(ready_state),
    ) -> ConceptOut:
        """A concept by ID (its own, a bare one such as ``D005955``, or an alternative ID):
        name, semantic types, alternative IDs, KG terms, added domain synonyms and KG
        neighbours (outgoing edges first)."""
        try:
            info = await run_in_threadpool(state.space.index.concept, concept_id)
        except UnknownConceptError as exc:
            message = redact_paths(str(exc))
            raise ApiError(404, ["path", "concept_id"], message, "unknown_concept") from None
        body = info.to_dict()
        relations = body["relations"]
        return ConceptOut.model_validate(
            {
                **body,
                "relations": None if relations is None else relations[:relations_limit],
                "relations_total": None if relations is None else len(relations),
                "domain_synonyms": state.domain_texts(info.concept_id),
            }
        )

    async def add_synonyms(body: Any, state: ServiceState = Depends(ready_state)) -> SynonymsOut:
        """Add domain synonyms to the running space (only the new texts are encoded) and to
        the store file, so a restart keeps them. Needs the bearer token."""
        for i, pair in enumerate(body.pairs):
            if (p := query_problem(pair.text, settings.max_chars)) is not None:
                raise FieldError(["body", "pairs", i, "text"], p)
        resolved = state.resolve([(p.concept_id, p.text) for p in body.pairs])
        assert runtime.batcher is not None
        report = await runtime.batcher.run_exclusive(lambda: state.add_synonyms(resolved))
        return SynonymsOut(**report.to_dict(), total=state.domain_size())  # type: ignore[arg-type]

    add_synonyms.__annotations__["body"] = synonyms_in
    app.post(
        SYNONYMS,
        response_model=SynonymsOut,
        tags=["synonyms"],
        dependencies=[Depends(authorized)],
        responses={500: {"model": ErrorOut, "description": "Not stored: nothing was added."}},
    )(add_synonyms)

    @app.post(
        UPLOAD_PATH,
        tags=["normalize"],
        response_class=FileResponse,
        responses={
            200: {
                "description": "The mapped file: every input row once, in order, with "
                "concept_id, concept_name, score, matched_term, error (and candidates when "
                "k > 1) appended. X-Termnorm-Report (JSON) says which column was used and "
                "counts rows, errors and abstentions.",
                "content": {"text/csv": {}, "text/tab-separated-values": {}},
            },
            415: {"model": ErrorOut, "description": "Not a CSV or TSV file."},
        },
    )
    async def normalize_upload(
        request: Request,
        file: UploadFile = File(
            description=f"A CSV or TSV file with a header line ({', '.join(UPLOAD_FORMATS)})."
        ),
        column: str = Form(
            "",
            description="The text column (empty, the default: the one column named "
            "text/term/mention, else the request is refused listing the columns).",
        ),
        k: int = Form(
            1, ge=1, le=settings.max_k, description="Candidates per row (k > 1 adds 'candidates')."
        ),
        strategy: str | None = Form(
            None, description="Search strategy, as for /v1/normalize (default: the service's)."
        ),
        min_score: float = Form(
            -1.0,
            ge=-1.0,
            le=1.0,
            description="Abstain below this score (the row's error); -1, the default: never.",
        ),
        state: ServiceState = Depends(ready_state),
    ) -> FileResponse:
        """Map the text column of an uploaded CSV/TSV file, row for row, as ``termnorm
        normalize --input`` does; the answer is the mapped file, for download. The work
        runs on a worker thread and stops when the client goes away."""
        floor = None if min_score <= -1.0 else min_score
        matcher = await run_in_threadpool(state.matcher, strategy, floor, None, None)
        assert runtime.batcher is not None
        cancelled = threading.Event()
        queued = QueuedMatcher(
            matcher,
            queued_encoder(runtime.batcher, asyncio.get_running_loop()),
            min(settings.batch_texts, settings.queue_texts),
            cancelled,
        )
        chosen = column.strip() or None
        watcher = asyncio.create_task(watch_disconnect(request.is_disconnected, cancelled))
        try:
            mapped = await run_in_threadpool(
                map_upload, file.file, file.filename or "", queued, chosen, k, upload_limits
            )
        except UploadProblem as exc:
            raise ApiError(exc.status, exc.loc, str(exc), exc.kind) from None
        except UploadCancelled as exc:
            raise ApiError(400, [], str(exc), "client_gone") from None
        finally:
            cancelled.set()
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watcher
            await file.close()
        report = mapped.report
        summary = {
            "column": report.column,
            "rows": report.rows,
            "errors": report.errors,
            "abstained": report.abstained,
        }
        return FileResponse(
            mapped.path,
            media_type=mapped.media_type,
            filename=mapped.filename,
            headers={"X-Termnorm-Report": json.dumps(summary)},  # ASCII: non-ASCII escaped
            background=BackgroundTask(shutil.rmtree, mapped.folder, ignore_errors=True),
        )

    @app.get("/metrics", include_in_schema=False)
    async def prometheus() -> Response:
        """Prometheus text exposition of the service's metrics."""
        return Response(metrics.render(), media_type=CONTENT_TYPE_LATEST)

    @app.get("/", include_in_schema=False)
    async def page() -> FileResponse:
        """The web page."""
        return FileResponse(STATIC / "index.html")

    app.mount("/static", StaticFiles(directory=STATIC), name="static")
