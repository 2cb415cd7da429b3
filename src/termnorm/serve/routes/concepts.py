"""The concepts of the index: ``GET /v1/concepts/{concept_id}`` (a concept with the domain
synonyms added to the running service, its KG neighbours and the vocabulary attributes of
both) and ``POST /v1/synonyms`` (add domain synonyms to the running space and to its store
file)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Query
from starlette.concurrency import run_in_threadpool

from termnorm.index.lookup import UnknownConceptError
from termnorm.serve.attributes import with_attributes
from termnorm.serve.batching import MicroBatcher
from termnorm.serve.errors import ApiError, redact_paths, shorten
from termnorm.serve.routes.deps import app_batcher, authorized, ready_state, with_limits
from termnorm.serve.schemas import (
    NO_CONTROL,
    ConceptOut,
    ErrorOut,
    SynonymsIn,
    SynonymsOut,
    request_models,
)
from termnorm.serve.settings import ServeSettings
from termnorm.serve.state import ServiceState

__all__ = ["MAX_RELATIONS", "SYNONYMS_PATH", "add_synonyms", "concept", "router"]

SYNONYMS_PATH = "/v1/synonyms"

MAX_RELATIONS = 1000  # most KG edges one concept answer may carry


async def concept(
    concept_id: Annotated[
        str, Path(pattern=NO_CONTROL, description="A concept ID (no control character).")
    ],
    relations_limit: int = Query(
        100, ge=0, le=MAX_RELATIONS, description="Most KG edges to return."
    ),
    state: ServiceState = Depends(ready_state),
) -> ConceptOut:
    """A concept by ID (its own, a bare one such as ``D005955``, or an alternative ID):
    name, semantic types, alternative IDs, KG terms, added domain synonyms, KG neighbours
    (outgoing edges first) and the vocabulary attributes of the concept and its neighbours."""
    index = state.space.index
    try:
        info = await run_in_threadpool(index.concept, concept_id)
    except UnknownConceptError as exc:
        message = shorten(redact_paths(str(exc)))  # the ID echoed is the client's
        raise ApiError(404, ["path", "concept_id"], message, "unknown_concept") from None
    body = info.to_dict()
    relations = body["relations"]
    return ConceptOut.model_validate(
        {
            **body,
            "relations": (
                None if relations is None else with_attributes(relations[:relations_limit], index)
            ),
            "relations_total": None if relations is None else len(relations),
            "domain_synonyms": state.domain_texts(info.concept_id),
        }
    )


async def add_synonyms(
    body: SynonymsIn,
    state: ServiceState = Depends(ready_state),
    batcher: MicroBatcher = Depends(app_batcher),
) -> Any:
    """Add domain synonyms to the running space (only the new texts are encoded) and to
    the store file, so a restart keeps them. Needs the bearer token."""
    resolved = state.resolve([(p.concept_id, p.text) for p in body.pairs])
    report = await batcher.run_exclusive(lambda: state.add_synonyms(resolved))
    return SynonymsOut(**report.to_dict(), total=state.domain_size())


def router(settings: ServeSettings) -> APIRouter:
    """The routes, the synonyms' body bounded by ``settings`` (pairs a request, characters
    a text)."""
    _, synonyms_in = request_models(settings.max_batch, settings.spec.max_chars, settings.max_k)
    routes = APIRouter()
    routes.add_api_route(
        "/v1/concepts/{concept_id:path}", concept, response_model=ConceptOut, tags=["concepts"]
    )
    routes.add_api_route(
        SYNONYMS_PATH,
        with_limits(add_synonyms, body=synonyms_in),
        methods=["POST"],
        response_model=SynonymsOut,
        tags=["synonyms"],
        dependencies=[Depends(authorized)],
        responses={
            401: {
                "model": ErrorOut,
                "description": "No 'Authorization: Bearer TOKEN' header, or another token "
                "than the one the service was started with (--token).",
            },
            403: {
                "model": ErrorOut,
                "description": "Adding synonyms is disabled: the service was started "
                "without --token (every request, with or without a token); or a "
                "cross-origin request.",
            },
            500: {"model": ErrorOut, "description": "Not stored: nothing was added."},
        },
    )
    return routes
