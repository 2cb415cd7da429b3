"""Annotating: ``POST /v1/annotate`` (the concepts of each document, with offsets, the
assertion flags and the ranked candidates: the rows ``termnorm annotate`` writes, each
candidate with its vocabulary attributes from the served index).

A request's annotator is the service's spec with the request's overridable fields
(:data:`~termnorm.serve.settings.OVERRIDABLE`), through the same search as
``/v1/normalize`` (``ServiceState.matcher``) and the dictionary of the current space,
built once per spec and ``k`` (``ServiceState.annotator``; the first request after a start
or an added synonym compiles the space's dictionary, or reads it from the dictionary cache).
It runs on a worker thread; its span searches are encoded by the micro-batcher, a full
queue refused at once (503).

Limits: documents per request (the schema, 422), characters of all documents together
(413, before any work), characters per document (that document's ``error``). A
document's bad content (too long, binary, a lone surrogate) is reported in its own result
and the others are annotated.
"""

from __future__ import annotations

import asyncio
import re
from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, Depends
from starlette.concurrency import run_in_threadpool

from termnorm.annotate.annotation import Annotation
from termnorm.annotate.pipeline import Annotator, DocumentAnnotations
from termnorm.serve.annotate_schemas import AnnotateIn, AnnotateOut, annotate_model
from termnorm.serve.attributes import with_attributes
from termnorm.serve.batching import MicroBatcher, queued_encoder, sending
from termnorm.serve.errors import ApiError
from termnorm.serve.routes.deps import app_batcher, app_settings, ready_state, with_limits
from termnorm.serve.schemas import stating_multi
from termnorm.serve.settings import OVERRIDABLE, ServeSettings
from termnorm.serve.state import ServiceState

if TYPE_CHECKING:
    from termnorm.index import TermIndex

__all__ = ["ANNOTATE_PATH", "annotate", "document_problem", "router"]

ANNOTATE_PATH = "/v1/annotate"

# Control characters no text holds (binary data): C0 but tab, line feed, vertical tab, form
# feed and carriage return; DEL; C1 but NEL (U+0085, a line break).
_BINARY = re.compile(r"[\x00-\x08\x0e-\x1f\x7f-\x84\x86-\x9f]")


def document_problem(text: str) -> str | None:
    """Why ``text`` is not a document's text (binary data, a lone surrogate), else ``None``;
    the length is the annotator's check."""
    found = _BINARY.search(text)
    if found is not None:
        return (
            f"binary data, not text: control character U+{ord(found.group()):04X} at "
            f"character {found.start()}; send the document's text"
        )
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return (
            f"not valid Unicode text: a lone surrogate U+{ord(text[exc.start]):04X} at "
            f"character {exc.start}; send UTF-8 text"
        )
    return None


def _annotate_all(annotator: Annotator, body: AnnotateIn) -> list[DocumentAnnotations]:
    """Each document's annotations, or its own error (the others go on)."""
    results = []
    for doc in body.documents:
        problem = document_problem(doc.text)
        if problem is not None:
            results.append(DocumentAnnotations(doc.id, [], f"document {doc.id!r}: {problem}"))
        else:
            results.extend(annotator.annotate_many([(doc.id, doc.text)]))
    return results


def _annotation(annotation: Annotation, index: TermIndex) -> dict[str, Any]:
    """The JSON row of ``annotation`` with its candidates' vocabulary attributes."""
    row = annotation.to_dict()
    return {**row, "candidates": with_attributes(row["candidates"], index)}


async def annotate(
    body: AnnotateIn,
    state: ServiceState = Depends(ready_state),
    batcher: MicroBatcher = Depends(app_batcher),
    settings: ServeSettings = Depends(app_settings),
) -> AnnotateOut:
    """The concepts of each document: offsets, concept, flags, candidates, provenance."""
    total = sum(len(doc.text) for doc in body.documents)
    if total > settings.max_annotate_chars:
        raise ApiError(
            413,
            ["body", "documents"],
            f"{total:,} characters in all, over the server's limit of "
            f"{settings.max_annotate_chars:,} a request: send fewer documents a request "
            "(the server's --max-annotate-chars)",
            "too_large",
        )
    given = body.model_dump(include=set(OVERRIDABLE), exclude_unset=True)
    spec = state.request_spec(given)
    annotator = await run_in_threadpool(state.annotator, spec, body.k)
    encode = queued_encoder(batcher, asyncio.get_running_loop(), wait_when_full=False)
    results = await run_in_threadpool(sending, encode, _annotate_all, annotator, body)
    index = state.space.index
    return AnnotateOut.model_validate(
        {
            "strategy": annotator.matcher.name,
            "k": body.k,
            "results": [
                {
                    "doc_id": result.doc_id,
                    "annotations": [_annotation(a, index) for a in result.annotations],
                    "error": result.error,
                    "warning": result.warning,
                }
                for result in results
            ],
        }
    )


def router(settings: ServeSettings) -> APIRouter:
    """The route, bounded by ``settings`` (documents a request, ``k``; the characters are
    checked by the route, the body's bytes by the app's body limit)."""
    body = annotate_model(settings.max_documents, settings.max_document_chars, settings.max_k)
    routes = APIRouter()
    routes.add_api_route(
        ANNOTATE_PATH,
        with_limits(annotate, body=stating_multi(body, settings.spec.ranker is not None)),
        methods=["POST"],
        response_model=AnnotateOut,
        tags=["annotate"],
    )
    return routes
