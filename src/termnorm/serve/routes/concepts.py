"""``GET /v1/concepts/{concept_id}``: a concept of the index, with the domain synonyms added
to the running service and its KG neighbours."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Query
from starlette.concurrency import run_in_threadpool

from termnorm.index.lookup import UnknownConceptError
from termnorm.serve.errors import ApiError, redact_paths
from termnorm.serve.routes.deps import ready_state
from termnorm.serve.schemas import ConceptOut
from termnorm.serve.state import ServiceState

__all__ = ["MAX_RELATIONS", "router"]

MAX_RELATIONS = 1000  # most KG edges one concept answer may carry

router = APIRouter()


@router.get("/v1/concepts/{concept_id:path}", response_model=ConceptOut, tags=["concepts"])
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
