"""The web page at ``/``; its assets are served from :data:`STATIC` at ``/static``."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import FileResponse

__all__ = ["STATIC", "router"]

STATIC = Path(__file__).parents[1] / "static"

router = APIRouter()


@router.get("/", include_in_schema=False)
async def page() -> FileResponse:
    """The web page."""
    return FileResponse(STATIC / "index.html")
