"""Annotating: ``POST /v1/annotate`` (the concepts of each document, with offsets, the
assertion flags and the ranked candidates: the rows ``termnorm annotate`` writes, each
candidate with its vocabulary attributes from the served index).

A request's annotator is the service's spec with the request's overridable fields
(:data:`~termnorm.serve.settings.OVERRIDABLE`), through the same search as
``/v1/normalize`` (``ServiceState.matcher``) and the dictionary of the current space,
built once per annotate spec (the service's, with the request's ``k``, ``language`` and
``detectors``; ``ServiceState.annotator``; the first request after a start
or an added synonym compiles the space's dictionary, or reads it from the dictionary cache).

**Concurrent requests are annotated together, as a batch job does.** Their documents wait in
the service's micro-batcher of documents (:func:`document_batcher`: up to
:data:`BATCH_DOCUMENTS` a batch, ``batch_wait_ms`` to fill it, ``queue_texts`` documents
waiting at most: a full queue is refused at once, 503); its one thread annotates a batch
with the library's batch entry point, ``Annotator.annotate_many`` (:func:`annotate_batch`),
whose span searches are encoded by the texts' micro-batcher. Each request's answer is then
built on a worker thread, at most ``annotate_workers`` at once (threads of Python work take
the interpreter from the event loop). Nothing of a request runs on the event loop
(``/v1/health``, the other requests).

Limits: documents per request (the schema, 422), ``k`` (``max_annotate_k``, 422),
characters of all documents together (413, before any work), characters per document (that
document's ``error``), annotations per document (``max_annotations``: the rest are cut and
the result says ``truncated``), bytes of the answer (``max_answer_mb``: 413). A
document's bad content (too long, binary, a lone surrogate) is reported in its own result
and the others are annotated.

The whole answer, its JSON included, is built on the worker thread and sent as bytes, so
the event loop never waits for a large answer.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import json
import logging
import re
from collections.abc import Sequence
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
from termnorm.serve.routes.deps import app_documents, app_settings, ready_state, with_limits
from termnorm.serve.schemas import stating_multi
from termnorm.serve.settings import OVERRIDABLE, ServeSettings
from termnorm.serve.state import ServiceState

if TYPE_CHECKING:
    from termnorm.annotate.spec import AnnotateSpec
    from termnorm.index import TermIndex

__all__ = ["ANNOTATE_PATH", "annotate", "document_batcher", "document_problem", "router"]

logger = logging.getLogger(__name__)

ANNOTATE_PATH = "/v1/annotate"
BATCH_DOCUMENTS = 64
"""Documents of concurrent requests annotated in one batch (a request's are never split)."""

Document = tuple[str, str, "str | None"]  # (id, text, lang)

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


def annotate_batch(jobs: Sequence[tuple[Annotator, Document]]) -> list[DocumentAnnotations]:
    """Each ``(annotator, document)``'s annotations, in order: the documents of one annotator
    that follow each other in one ``annotate_many`` call (the batch path's entry point: it
    refuses a bad document in its own result and goes on with the others)."""
    results: list[DocumentAnnotations] = []
    for annotator, group in itertools.groupby(jobs, key=lambda job: job[0]):
        results.extend(annotator.annotate_many([document for _, document in group]))
    return results


def document_batcher(
    settings: ServeSettings, texts: MicroBatcher[str, Any]
) -> MicroBatcher[tuple[Annotator, Document], list[DocumentAnnotations]]:
    """The micro-batcher of annotate's documents (module doc), whose span searches are
    encoded through ``texts`` (waiting while its queue is full: the documents were let in).
    Made on the event loop the service runs on; ``micro_batching`` off: each request alone."""
    loop = asyncio.get_running_loop()
    work = functools.partial(sending, queued_encoder(texts, loop), annotate_batch)
    on = settings.micro_batching
    return MicroBatcher(
        work,
        max_texts=BATCH_DOCUMENTS if on else 1,
        max_wait_s=settings.batch_wait_ms / 1000 if on else 0.0,
        max_queued=settings.queue_texts,
        what="annotate",
    )


def _prepared(
    state: ServiceState, spec: AnnotateSpec, body: AnnotateIn
) -> tuple[Annotator, list[str | None]]:
    """The annotator of ``spec`` and why each document of ``body`` is not a document's
    text (``None``: it is; on a worker thread: the texts may be long)."""
    return state.annotator(spec), [document_problem(doc.text) for doc in body.documents]


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
    results: list[DocumentAnnotations],
    strategy: str,
    body: AnnotateIn,
    index: TermIndex,
    settings: ServeSettings,
) -> bytes:
    """The ``AnnotateOut`` JSON of ``body``'s ``results`` (on a worker thread): each
    document's first ``max_annotations`` annotations (``truncated`` when it had more);
    :class:`ApiError` 413 as soon as the answer grows past ``settings.max_answer_bytes``.
    Each annotation is validated and written on its own (``AnnotationOut``): one large
    document is never one long call that holds the interpreter from the event loop."""
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
    return _json_object({"strategy": strategy, "k": body.k}, "results", documents)


def annotate_slots(request: Request) -> CapacityLimiter:
    """The app's limit of annotate answers built at once (``annotate_workers``), made
    on its first use (on the event loop, as the limiter needs)."""
    slots = getattr(request.app.state, "annotate_slots", None)
    if slots is None:
        slots = CapacityLimiter(app_settings(request).annotate_workers)
        request.app.state.annotate_slots = slots
    return slots  # type: ignore[no-any-return]


async def annotate(
    body: AnnotateIn,
    state: ServiceState = Depends(ready_state),
    batcher: MicroBatcher[Any, Any] = Depends(app_documents),
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
    annotator, problems = await run_in_threadpool(_prepared, state, spec, body)
    readable = [
        (annotator, (doc.id, doc.text, doc.lang))
        for doc, problem in zip(body.documents, problems, strict=True)
        if problem is None
    ]
    annotated = iter(await batcher.encode(readable) if readable else [])
    results = [
        next(annotated)
        if problem is None
        else DocumentAnnotations(doc.id, [], f"document {doc.id!r}: {problem}")
        for doc, problem in zip(body.documents, problems, strict=True)
    ]
    strategy, index = annotator.matcher.name, state.space.index
    work = functools.partial(_answer, results, strategy, body, index, settings)
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
