"""Annotating: ``POST /v1/annotate`` (the concepts of each document, with offsets, the
assertion flags and the ranked candidates: the rows ``termnorm annotate`` writes, each
candidate with its vocabulary attributes from the served index).

A request's annotator is the service's spec with the request's overridable fields
(:data:`~termnorm.serve.settings.OVERRIDABLE`), through the same search as
``/v1/normalize`` (``ServiceState.matcher``) and the dictionary of the current space,
built once per annotate spec (the service's, with the request's ``k``, ``language`` and
``detectors``; ``ServiceState.annotator``; the first request after a start
or an added synonym compiles the space's dictionary, or reads it from the dictionary cache).
It runs on a worker thread, at most ``annotate_workers`` requests at once (the others wait
their turn: threads of Python work take the interpreter from the event loop); its span
searches are encoded by the micro-batcher, a full queue refused at once (503).

Limits: documents per request (the schema, 422), ``k`` (``max_annotate_k``, 422),
characters of all documents together (413, before any work), characters per document (that
document's ``error``), annotations per document (``max_annotations``: the rest are cut and
the result says ``truncated``), bytes of the answer (``max_answer_mb``: 413). A
document's bad content (too long, binary, a lone surrogate) is reported in its own result
and the others are annotated.

The whole answer, its JSON included, is built on the worker thread and sent as bytes, so
the event loop (``/v1/health``, the other requests) never waits for a large answer.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import re
from typing import TYPE_CHECKING, Any

from anyio import CapacityLimiter, to_thread
from fastapi import APIRouter, Depends, Request, Response
from starlette.concurrency import run_in_threadpool

from termnorm.annotate.annotation import Annotation
from termnorm.annotate.pipeline import Annotator, DocumentAnnotations
from termnorm.serve.annotate_schemas import (
    AnnotateIn,
    AnnotateOut,
    AnnotationOut,
    annotate_model,
)
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

logger = logging.getLogger(__name__)

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
            results.extend(annotator.annotate_many([(doc.id, doc.text, doc.lang)]))
    return results


def _annotation(annotation: Annotation, index: TermIndex) -> dict[str, Any]:
    """The JSON row of ``annotation`` with its candidates' vocabulary attributes."""
    row = annotation.to_dict()
    return {**row, "candidates": with_attributes(row["candidates"], index)}


def _json_object(fields: dict[str, Any], name: str, items: list[bytes]) -> bytes:
    """The JSON object of ``fields`` and, last, member ``name``: the array of ``items``
    (each already JSON)."""
    head = json.dumps(fields)[:-1].encode("utf-8")  # '{"a": 1' (fields is never empty)
    return head + b', "' + name.encode("utf-8") + b'": [' + b", ".join(items) + b"]}"


def _answer_too_large(settings: ServeSettings, done: int, total: int, k: int) -> ApiError:
    """The 413 of an answer that grew past ``settings.max_answer_bytes`` at document
    ``done`` of ``total``."""
    return ApiError(
        413,
        ["body", "documents"],
        f"the answer grew past the server's limit of {settings.max_answer_mb:g} MiB at "
        f"document {done} of {total}: ask a smaller k (this request's is {k}), or send fewer "
        "or shorter documents a request (the server's --max-answer-mb)",
        "too_large",
    )


def _answer(
    annotator: Annotator, body: AnnotateIn, index: TermIndex, settings: ServeSettings
) -> bytes:
    """The ``AnnotateOut`` JSON of ``body`` (on a worker thread): each document's first
    ``max_annotations`` annotations (``truncated`` when it had more); :class:`ApiError` 413
    as soon as the answer grows past ``settings.max_answer_bytes``. Each annotation is
    validated and written on its own (``AnnotationOut``): one large document is never one
    long call that holds the interpreter from the event loop."""
    results = _annotate_all(annotator, body)
    most, documents, size = settings.max_annotations, [], 0
    for done, result in enumerate(results, 1):
        truncated = len(result.annotations) > most
        if truncated:
            logger.info("document %r: annotations cut to %d", result.doc_id, most)
        rows = []
        for annotation in result.annotations[:most]:
            row = AnnotationOut.model_validate(_annotation(annotation, index))
            rows.append(row.model_dump_json().encode("utf-8"))
            size += len(rows[-1]) + 2
            if size > settings.max_answer_bytes:
                raise _answer_too_large(settings, done, len(results), body.k)
        document = {
            "doc_id": result.doc_id,
            "error": result.error,
            "warning": result.warning,
            "truncated": truncated,
        }
        documents.append(_json_object(document, "annotations", rows))
    return _json_object({"strategy": annotator.matcher.name, "k": body.k}, "results", documents)


def annotate_slots(request: Request) -> CapacityLimiter:
    """The app's limit of annotate requests worked on at once (``annotate_workers``), made
    on its first use (on the event loop, as the limiter needs)."""
    slots = getattr(request.app.state, "annotate_slots", None)
    if slots is None:
        slots = CapacityLimiter(app_settings(request).annotate_workers)
        request.app.state.annotate_slots = slots
    return slots  # type: ignore[no-any-return]


async def annotate(
    body: AnnotateIn,
    state: ServiceState = Depends(ready_state),
    batcher: MicroBatcher = Depends(app_batcher),
    settings: ServeSettings = Depends(app_settings),
    slots: CapacityLimiter = Depends(annotate_slots),
) -> Response:
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
    own = body.model_dump(
        include={"language", "detectors", "findings"}, exclude_unset=True, exclude_none=True
    )
    spec = state.annotate_spec(state.request_spec(given), {"k": body.k, **own})
    annotator = await run_in_threadpool(state.annotator, spec)
    encode = queued_encoder(batcher, asyncio.get_running_loop(), wait_when_full=False)
    index = state.space.index
    work = functools.partial(sending, encode, _answer, annotator, body, index, settings)
    answer = await to_thread.run_sync(work, limiter=slots)  # annotate_workers at once
    return Response(answer, media_type="application/json")


def router(settings: ServeSettings) -> APIRouter:
    """The route, bounded by ``settings`` (documents a request, ``k``; the characters and
    the answer's size are checked by the route, the body's bytes by the app's body limit);
    ``AnnotateOut`` is the answer's schema, built on the worker thread (``_answer``)."""
    body = annotate_model(
        settings.max_documents,
        settings.max_document_chars,
        settings.max_annotate_k,
        settings.annotate.runnable_detectors(),
    )
    routes = APIRouter()
    routes.add_api_route(
        ANNOTATE_PATH,
        with_limits(annotate, body=stating_multi(body, settings.spec.ranker is not None)),
        methods=["POST"],
        response_model=AnnotateOut,
        tags=["annotate"],
    )
    return routes
