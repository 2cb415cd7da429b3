"""``POST /v1/synonyms``: add domain synonyms to the running space and its store file."""

from __future__ import annotations

from fastapi import APIRouter, Depends

from termnorm.search.query import query_problem
from termnorm.serve.batching import MicroBatcher
from termnorm.serve.routes.deps import app_batcher, authorized, ready_state, with_limits
from termnorm.serve.schemas import ErrorOut, SynonymsIn, SynonymsOut, request_models
from termnorm.serve.settings import ServeSettings
from termnorm.serve.state import FieldError, ServiceState

__all__ = ["SYNONYMS_PATH", "add_synonyms", "router"]

SYNONYMS_PATH = "/v1/synonyms"


async def add_synonyms(
    body: SynonymsIn,
    state: ServiceState = Depends(ready_state),
    batcher: MicroBatcher = Depends(app_batcher),
) -> SynonymsOut:
    """Add domain synonyms to the running space (only the new texts are encoded) and to
    the store file, so a restart keeps them. Needs the bearer token."""
    for i, pair in enumerate(body.pairs):
        if (p := query_problem(pair.text, state.settings.max_chars)) is not None:
            raise FieldError(["body", "pairs", i, "text"], p)
    resolved = state.resolve([(p.concept_id, p.text) for p in body.pairs])
    report = await batcher.run_exclusive(lambda: state.add_synonyms(resolved))
    return SynonymsOut(**report.to_dict(), total=state.domain_size())  # type: ignore[arg-type]


def router(settings: ServeSettings) -> APIRouter:
    """The route, its body bounded by ``settings`` (pairs per request, characters a text)."""
    _, synonyms_in = request_models(settings.max_batch, settings.max_chars, settings.max_k)
    routes = APIRouter()
    routes.add_api_route(
        SYNONYMS_PATH,
        with_limits(add_synonyms, body=synonyms_in),
        methods=["POST"],
        response_model=SynonymsOut,
        tags=["synonyms"],
        dependencies=[Depends(authorized)],
        responses={500: {"model": ErrorOut, "description": "Not stored: nothing was added."}},
    )
    return routes
