"""Searching: ``POST /v1/normalize`` (the top-``k`` concepts of each text) and
``POST /v1/normalize/file`` (map the text column of an uploaded CSV/TSV file, row for row, as
``termnorm normalize --input`` does; the run: :mod:`termnorm.serve.uploads`).

A request's search is the service's spec with the request's overridable fields
(:data:`~termnorm.serve.settings.OVERRIDABLE`), built by ``build(spec)``: a text goes
through that matcher as a file row does, its validation and abstain messages are the
matcher's; only the encoding is the service's, through the micro-batcher
(:class:`~termnorm.serve.batching.QueuedEncoder`). A full encoding queue is refused at once
(503), never waited on.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import threading
from typing import Annotated, Any

from fastapi import APIRouter, Depends, File, Form, Request, Response, UploadFile
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse
from starlette.background import BackgroundTask
from starlette.concurrency import run_in_threadpool

from termnorm.encoders.language_coverage import language_warning
from termnorm.io.decoding import DEFAULT_ENCODING, DecodeErrors
from termnorm.io.lines import text_encodings
from termnorm.search.candidate import RowResult
from termnorm.search.file_spec import RowOptions
from termnorm.search.identity import matcher_model
from termnorm.serve.batching import MicroBatcher, queued_encoder, sending
from termnorm.serve.errors import ApiError
from termnorm.serve.routes.deps import app_batcher, app_settings, ready_state, with_limits
from termnorm.serve.schemas import (
    ErrorOut,
    NormalizeIn,
    NormalizeOut,
    request_models,
    stating_multi,
)
from termnorm.serve.settings import OVERRIDABLE, ServeSettings
from termnorm.serve.state import ServiceState
from termnorm.serve.uploads import (
    UPLOAD_FORMATS,
    UPLOAD_PATH,
    Decoding,
    UploadCancelled,
    UploadLimits,
    UploadQueue,
    map_upload,
    watch_disconnect,
)

__all__ = ["normalize", "normalize_upload", "router"]


LANGUAGE_HEADER = "X-Termnorm-Language-Warning"
"""Set when texts look non-English to an English-only model (what to do instead)."""


async def normalize(
    body: NormalizeIn,
    response: Response,
    state: ServiceState = Depends(ready_state),
    batcher: MicroBatcher = Depends(app_batcher),
) -> NormalizeOut:
    """The top-``k`` concepts of each text, with the provenance of each candidate; the
    :data:`LANGUAGE_HEADER` says when the texts look non-English to an English-only model."""
    given = body.model_dump(include=set(OVERRIDABLE), exclude_unset=True)
    matcher = await run_in_threadpool(state.matcher, state.request_spec(given))
    encode = queued_encoder(batcher, asyncio.get_running_loop(), wait_when_full=False)
    rows: list[RowResult] = await run_in_threadpool(
        sending, encode, matcher.normalize_rows, body.texts, body.k
    )
    problems = [
        {"loc": ("body", "texts", i), "msg": row.error, "type": "value_error"}
        for i, row in enumerate(rows)
        if row.error is not None
    ]
    if problems:  # what the schema lets through and the matcher refuses
        raise RequestValidationError(problems)
    if warning := language_warning(matcher_model(matcher), body.texts):
        response.headers[LANGUAGE_HEADER] = warning.encode("latin-1", "replace").decode("latin-1")
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


_K_HELP = "Candidates per row (k > 1 adds 'candidates')."
_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "The mapped file: every input row once, in order, with concept_id, "
        "concept_name, score, matched_term, error (and candidates when k > 1) appended. "
        "X-Termnorm-Report (JSON) says which column was used and counts rows, errors and "
        "abstentions.",
        "content": {"text/csv": {}, "text/tab-separated-values": {}},
    },
    415: {
        "model": ErrorOut,
        "description": "Not a CSV or TSV file: the file's name must end in "
        f"{', '.join(UPLOAD_FORMATS)}.",
    },
}
_UPLOAD_PART = {
    "requestBody": {
        "content": {
            "multipart/form-data": {
                "encoding": {
                    "file": {
                        "contentType": "text/csv, text/tab-separated-values",
                        "headers": {
                            "Content-Disposition": {
                                "description": "The file's name ends in "
                                f"{', '.join(UPLOAD_FORMATS)} (any case): it says how the "
                                "file is read; any other name is refused (415).",
                                "schema": {
                                    "type": "string",
                                    "example": 'form-data; name="file"; filename="terms.csv"',
                                },
                            }
                        },
                    }
                }
            }
        }
    }
}
"""How the file part is sent, in the OpenAPI document: its name's suffix decides its format."""


async def normalize_upload(
    request: Request,
    file: UploadFile = File(
        description="A CSV or TSV file with a header line; its name ends in "
        f"{', '.join(UPLOAD_FORMATS)} (else 415)."
    ),
    column: str = Form(
        "",
        description="The text column (empty, the default: the one column named "
        "text/term/mention, else the request is refused listing the columns).",
    ),
    k: Annotated[int, Form(ge=1, description=_K_HELP)] = 1,
    strategy: str = Form(
        "",
        description="Search strategy, as for /v1/normalize: a module (o-t, o-c, d-t, d-c, "
        "od-t, od-c) or a sieve FIRST+SECOND (d-t+od-t); empty, the default: the service's.",
    ),
    encoding: str = Form(
        DEFAULT_ENCODING,
        description="The file's encoding, a Python text codec: one of these names or any "
        "alias Python knows, in any case (latin-1, UTF8); empty or the default: UTF-8, a "
        "leading byte-order mark skipped. Any other name, or a codec that does not read "
        "bytes as text (hex, base64, rot13, bz2), is refused (422).",
        json_schema_extra={"enum": ["", *text_encodings()]},
    ),
    errors: DecodeErrors = Form(
        DecodeErrors.STRICT,
        description="Bytes the encoding cannot decode: strict refuses the file naming their "
        "line; replace keeps the row with U+FFFD in their place.",
    ),
    min_score: float = Form(
        -1.0,
        ge=-1.0,
        le=1.0,
        allow_inf_nan=False,
        description="Abstain below this score (the row's error); -1, the default: never.",
    ),
    state: ServiceState = Depends(ready_state),
    batcher: MicroBatcher = Depends(app_batcher),
    settings: ServeSettings = Depends(app_settings),
) -> FileResponse:
    """Map the text column of an uploaded CSV/TSV file, row for row, as ``termnorm
    normalize --input`` does; the answer is the mapped file, for download. The work
    runs on a worker thread and stops when the client goes away."""
    floor = None if min_score <= -1.0 else min_score
    decoding = Decoding(encoding.strip() or DEFAULT_ENCODING, errors)
    spec = state.request_spec({"strategy": strategy, "min_score": floor})
    matcher = await run_in_threadpool(state.matcher, spec)  # the whole pipeline, as the CLI's
    cancelled = threading.Event()
    queue = UploadQueue(
        queued_encoder(batcher, asyncio.get_running_loop()),
        min(settings.batch_texts, settings.queue_texts),
        cancelled,
    )
    rows = RowOptions(column.strip() or None, k)
    limits = UploadLimits(settings.max_upload_rows, settings.max_upload_columns)
    watcher = asyncio.create_task(watch_disconnect(request.is_disconnected, cancelled))
    try:
        mapped = await run_in_threadpool(
            map_upload, file.file, file.filename or "", matcher, queue, rows, limits, decoding
        )
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


def router(settings: ServeSettings) -> APIRouter:
    """The routes, bounded by ``settings`` (texts a request, characters a text, ``k``)."""
    normalize_in, _ = request_models(settings.max_batch, settings.spec.max_chars, settings.max_k)
    routes = APIRouter()
    routes.add_api_route(
        "/v1/normalize",
        # this service's limits in the schema, and whether it can answer multi
        with_limits(normalize, body=stating_multi(normalize_in, settings.spec.ranker is not None)),
        methods=["POST"],
        response_model=NormalizeOut,
        tags=["normalize"],
    )
    routes.add_api_route(
        UPLOAD_PATH,
        with_limits(
            normalize_upload,
            k=Annotated[int, Form(ge=1, le=settings.max_k, description=_K_HELP)],
        ),
        methods=["POST"],
        tags=["normalize"],
        response_class=FileResponse,
        responses=_RESPONSES,
        openapi_extra=_UPLOAD_PART,
    )
    return routes
