"""``POST /v1/normalize``: the top-``k`` concepts of each text.

The request goes through the matcher as a file row does (:meth:`SpaceMatcher.normalize_rows
<termnorm.search.matcher.SpaceMatcher.normalize_rows>`, then the ranker's when the service
has one): its validation and abstain messages are the matcher's; only the encoding is the
service's, through the micro-batcher (:class:`~termnorm.serve.uploads.QueuedMatcher`). A
full encoding queue is refused at once (503), never waited on.
"""

from __future__ import annotations

import asyncio

from fastapi import APIRouter, Depends
from fastapi.exceptions import RequestValidationError
from starlette.concurrency import run_in_threadpool

from termnorm.search.candidate import RowResult
from termnorm.serve.batching import MicroBatcher
from termnorm.serve.routes.deps import app_batcher, ready_state, with_limits
from termnorm.serve.schemas import NormalizeIn, NormalizeOut, request_models
from termnorm.serve.settings import ServeSettings
from termnorm.serve.state import ServiceState
from termnorm.serve.uploads import QueuedMatcher, queued_encoder

__all__ = ["normalize", "router"]


async def normalize(
    body: NormalizeIn,
    state: ServiceState = Depends(ready_state),
    batcher: MicroBatcher = Depends(app_batcher),
) -> NormalizeOut:
    """The top-``k`` concepts of each text, with the provenance of each candidate."""
    learned = state.ranks_by_probability  # min_score is then the combiner's probability
    recall = await run_in_threadpool(
        state.matcher, body.strategy, None if learned else body.min_score, body.namespaces,
        body.semantic_types,
    )  # fmt: skip
    encode = queued_encoder(batcher, asyncio.get_running_loop(), wait_when_full=False)
    queued = QueuedMatcher(recall, encode, len(body.texts))
    matcher = state.ranked(queued, body.multi, body.min_score if learned else None) or queued
    rows: list[RowResult] = await run_in_threadpool(matcher.normalize_rows, body.texts, body.k)
    problems = [
        {"loc": ("body", "texts", i), "msg": row.error, "type": "value_error"}
        for i, row in enumerate(rows)
        if row.error is not None
    ]
    if problems:  # what the schema lets through and the matcher refuses
        raise RequestValidationError(problems)
    return NormalizeOut.model_validate(
        {
            "strategy": matcher.name,
            "k": body.k,
            "results": [
                {
                    "text": text,
                    "candidates": [c.to_dict() for c in row.candidates],
                    "abstained": row.abstained,
                    "concept_ids": None if row.concept_ids is None else list(row.concept_ids),
                    "implication": row.implication,
                }
                for text, row in zip(body.texts, rows, strict=True)
            ],
        }
    )


def router(settings: ServeSettings) -> APIRouter:
    """The route, its body bounded by ``settings`` (texts, characters a text, ``k``)."""
    normalize_in, _ = request_models(settings.max_batch, settings.max_chars, settings.max_k)
    routes = APIRouter()
    routes.add_api_route(
        "/v1/normalize",
        with_limits(normalize, body=normalize_in),  # this service's limits in the schema
        methods=["POST"],
        response_model=NormalizeOut,
        tags=["normalize"],
    )
    return routes
