"""The service's own routes: ``/v1/health`` (the process is alive), ``/v1/ready`` (what is
served, or why not yet), ``/metrics`` (Prometheus) and the web page at ``/`` (its assets are
served from :data:`STATIC` at ``/static``)."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, Depends, Request
from fastapi.responses import FileResponse, JSONResponse, Response

from termnorm.serve.metrics import CONTENT_TYPE_LATEST, Metrics
from termnorm.serve.routes.deps import RETRY_LOADING, app_runtime
from termnorm.serve.schemas import HealthOut, ReadyOut
from termnorm.serve.state import ServiceRuntime

__all__ = ["STATIC", "router"]

STATIC = Path(__file__).parents[1] / "static"

router = APIRouter()


@router.get("/v1/health", response_model=HealthOut, tags=["service"])
async def health() -> HealthOut:
    """The process is alive (says nothing about the index: see ``/v1/ready``)."""
    return HealthOut()


@router.get("/v1/ready", response_model=ReadyOut, tags=["service"])
async def ready(runtime: ServiceRuntime = Depends(app_runtime)) -> JSONResponse:
    """200 with what is served once the index is loaded; 503 while loading or failed."""
    if runtime.state is not None:
        return JSONResponse(ReadyOut(status="ready", **runtime.state.info()).model_dump())
    if runtime.error is not None:
        body = ReadyOut(status="failed", error=runtime.public_error())
    else:
        body = ReadyOut(status="loading")
    return JSONResponse(
        body.model_dump(exclude_none=True),
        status_code=503,
        headers={"Retry-After": RETRY_LOADING},
    )


@router.get("/metrics", include_in_schema=False)
async def prometheus(request: Request) -> Response:
    """Prometheus text exposition of the service's metrics."""
    metrics: Metrics = request.app.state.metrics
    return Response(metrics.render(), media_type=CONTENT_TYPE_LATEST)


@router.get("/", include_in_schema=False)
async def page() -> FileResponse:
    """The web page."""
    return FileResponse(STATIC / "index.html")
