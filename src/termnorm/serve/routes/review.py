"""The review page of a mapping project: ``termnorm serve --project PROJECT`` includes
:data:`router` (the page at ``/review``, its JSON API under ``/v1/review``).

Every API call carries a reviewer's token (``Authorization: Bearer TOKEN``, made by
``termnorm map reviewer add PROJECT NAME``); the decisions made with it carry that
reviewer's name. A row opened for review is leased to its reviewer (``POST
/v1/review/next``, ``POST /v1/review/rows/CODE/lease``), so others' ``next`` skips it until
the reviewer decides, skips (``DELETE .../lease``) or the lease expires. A decision names
the row version the reviewer saw; one on a row leased to someone else, or changed since,
answers 409 with what changed (the row as it is now, or who holds it) and writes nothing.
The queue is the project's (frequency × uncertainty); searching by hand and a concept's
synonyms and neighbours are the service's own ``/v1/normalize`` and ``/v1/concepts/ID``,
over the project's index. A row's candidates carry their concepts' vocabulary attributes
from that index (:mod:`termnorm.serve.attributes`), so the routes that show a row answer
503 while it loads, as the decisions do.

The project's store opens when the app starts (this router's lifespan) and closes with it;
the routes run on worker threads (the database calls block).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import APIRouter, Depends, FastAPI, Path, Query, Request
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.convertors import PathConvertor, register_url_convertor

from termnorm.errors import (
    DatabaseBusyError,
    DatabaseUnreachableError,
    DecisionError,
    LeaseHeldError,
    StaleRowError,
    UnknownCodeError,
)
from termnorm.projects.concepts import index_concepts
from termnorm.projects.leases import (
    LEASE_MINUTES,
    acquire,
    acquire_next,
    decide_leased,
    queue_size,
    release,
)
from termnorm.projects.reviewers import reviewer_for_token
from termnorm.projects.rows import review_queue, show_row
from termnorm.projects.states import RowState
from termnorm.projects.store import Store, open_store
from termnorm.serve.attributes import with_attributes
from termnorm.serve.errors import ApiError, shorten
from termnorm.serve.review_schemas import (
    ConflictOut,
    DecidedOut,
    DecisionIn,
    NextIn,
    NextOut,
    QueueOut,
    ReviewerOut,
    RowOut,
)
from termnorm.serve.routes.deps import ready_state
from termnorm.serve.routes.service import STATIC
from termnorm.serve.schemas import NO_CONTROL, error_body
from termnorm.serve.state import ServiceState

__all__ = ["PAGE", "ReviewContext", "router"]

PAGE = STATIC / "review"
_ASSETS = {"review.js": "text/javascript", "review.css": "text/css"}
_RETRY_BUSY = "2"
_MAX_QUEUE = 200
_ACTIONS = ("lease", "decisions")  # what follows a row code in .../rows/CODE/ACTION


class _RowCode(PathConvertor):
    """A row code in a path (slashes allowed) that does not end in ``/lease`` or
    ``/decisions``: those paths are the row's actions, so another method on them is 405
    with their ``Allow``, never a row code ``CODE/lease``."""

    regex = ".*" + "".join(f"(?<!/{action})" for action in _ACTIONS)


register_url_convertor("row_code", _RowCode())  # the row route's path names it
RowCode = Annotated[str, Path(pattern=NO_CONTROL, description="A row's code.")]


@dataclass
class ReviewContext:
    """What the routes share: the project, its open store, how long a lease lasts."""

    project: str
    store: Store
    lease_minutes: float = LEASE_MINUTES


@dataclass(frozen=True)
class Reviewer:
    """The reviewer a request's token names, and the context to work in."""

    name: str
    context: ReviewContext


def _open(project: str, db: str | None) -> Store:
    """The project's store, checked to hold ``project`` (else the start-up fails, saying so)."""
    store = open_store(project, db, create=False)
    try:
        with store.session() as session:
            store.project(session, project)
    except BaseException:
        store.close()
        raise
    return store


@asynccontextmanager
async def _lifespan(app: FastAPI) -> AsyncIterator[None]:
    settings = app.state.settings
    store = await asyncio.to_thread(_open, settings.project, settings.project_db)
    app.state.review = ReviewContext(settings.project, store, settings.lease_minutes)
    try:
        yield
    finally:
        store.close()


router = APIRouter(lifespan=_lifespan)
"""The review page and its API; the app includes it when it serves a project."""

_bearer = HTTPBearer(
    auto_error=False,
    scheme_name="ReviewerToken",
    description="A reviewer's token (termnorm map reviewer add PROJECT NAME).",
)
_CONFLICT: dict[int | str, dict[str, Any]] = {
    401: {"description": "No token, or one that names no reviewer of this project."},
    409: {
        "model": ConflictOut,
        "description": "Leased to another reviewer (lease) or changed since (row): "
        "nothing written.",
    },
}


def _context(request: Request) -> ReviewContext:
    context = getattr(request.app.state, "review", None)
    if context is None:  # the lifespan has not run (an app used without starting it)
        raise ApiError(503, [], "the project is not open yet; retry shortly", "loading")
    assert isinstance(context, ReviewContext)
    return context


@contextmanager
def _answers() -> Iterator[None]:
    """The project's errors as HTTP answers (409s are the routes' own)."""
    try:
        yield
    except UnknownCodeError as exc:  # the code echoed is the client's: shortened
        raise ApiError(404, ["path", "code"], shorten(str(exc)), "unknown_code") from None
    except DecisionError as exc:
        raise ApiError(422, ["body"], str(exc), "decision_refused") from None
    except DatabaseBusyError as exc:
        headers = {"Retry-After": _RETRY_BUSY}
        raise ApiError(503, [], str(exc), "database_busy", headers) from None
    except DatabaseUnreachableError:
        message = "the project database cannot be reached; the server's log says why"
        raise ApiError(503, [], message, "database_unreachable") from None


def reviewer(
    request: Request, credentials: HTTPAuthorizationCredentials | None = Depends(_bearer)
) -> Reviewer:
    """The reviewer the bearer token names (401 without a token or with an unknown one)."""
    context = _context(request)
    name = None
    if credentials is not None and credentials.credentials:
        with _answers():
            name = reviewer_for_token(context.project, credentials.credentials, db=context.store)
    if name is None:
        raise ApiError(
            401,
            ["header", "Authorization"],
            "missing or unknown reviewer token: send 'Authorization: Bearer TOKEN' with the "
            f"token of termnorm map reviewer add {context.project} NAME",
            "unauthorized",
            headers={"WWW-Authenticate": "Bearer"},
        )
    return Reviewer(name, context)


def _conflict(message: str, loc: list[str | int], kind: str, **what: Any) -> JSONResponse:
    body = {**error_body(loc, message, kind), **what}
    return JSONResponse(ConflictOut.model_validate(body).model_dump(), status_code=409)


def _shown(row: dict[str, Any], state: ServiceState) -> dict[str, Any]:
    """A row's JSON (``RowOut``) with its candidates' attributes from the served index."""
    return {**row, "candidates": with_attributes(row["candidates"], state.space.index)}


def _lease_held(exc: LeaseHeldError) -> JSONResponse:
    lease = {"reviewer": exc.holder, "expires_at": exc.expires_at.isoformat()}
    return _conflict(str(exc), ["path", "code"], "leased", lease=lease)


# ---------------------------------------------------------------------------- the page
@router.get("/review", include_in_schema=False)
async def page() -> FileResponse:
    """The review page (it asks for the token; ``/review#token=TOKEN`` passes it)."""
    return FileResponse(PAGE / "index.html")


@router.get("/review/{asset}", include_in_schema=False)
async def asset(asset: str) -> Response:
    """The page's script and style sheet."""
    if asset not in _ASSETS:
        raise ApiError(404, ["path"], f"no such file: {asset[:80]!r}", "not_found")
    return FileResponse(PAGE / asset, media_type=_ASSETS[asset])


# ---------------------------------------------------------------------------- the API
@router.get("/v1/review/me", response_model=ReviewerOut, tags=["review"], responses=_CONFLICT)
def me(who: Reviewer = Depends(reviewer)) -> ReviewerOut:
    """Who the token names, in which project."""
    context = who.context
    return ReviewerOut(
        reviewer=who.name, project=context.project, lease_minutes=context.lease_minutes
    )


@router.get("/v1/review/queue", response_model=QueueOut, tags=["review"], responses=_CONFLICT)
def queue(
    limit: int = Query(20, ge=1, le=_MAX_QUEUE, description="Rows to list."),
    flagged: bool = Query(False, description="The flagged rows (second opinions) instead."),
    who: Reviewer = Depends(reviewer),
) -> QueueOut:
    """The next rows open to this reviewer (rows leased to others left out), frequency ×
    uncertainty first, and how many there are."""
    states = (RowState.FLAGGED,) if flagged else (RowState.TO_REVIEW,)
    store, project = who.context.store, who.context.project
    with _answers():
        rows = review_queue(project, limit=limit, states=states, reviewer=who.name, db=store)
        total = queue_size(project, who.name, states=states, db=store)
    return QueueOut.model_validate(
        {"rows": [r.to_dict() for r in rows], "total": total, "flagged": flagged}
    )


@router.post("/v1/review/next", response_model=NextOut, tags=["review"], responses=_CONFLICT)
def next_row(
    body: NextIn,
    who: Reviewer = Depends(reviewer),
    state: ServiceState = Depends(ready_state),
) -> NextOut:
    """Lease this reviewer the queue's first row that nobody holds (their earlier lease is
    given back); ``row`` is ``null`` when none is left."""
    states = (RowState.FLAGGED,) if body.flagged else (RowState.TO_REVIEW,)
    context = who.context
    with _answers():
        leased = acquire_next(
            context.project,
            who.name,
            minutes=context.lease_minutes,
            states=states,
            skip=body.skip,
            db=context.store,
        )
    return NextOut.model_validate(
        {"row": None if leased is None else _shown(leased.to_dict(), state)}
    )


@router.post(
    "/v1/review/rows/{code:path}/lease",
    response_model=RowOut,
    tags=["review"],
    responses=_CONFLICT,
)
def take_lease(
    code: RowCode,
    who: Reviewer = Depends(reviewer),
    state: ServiceState = Depends(ready_state),
) -> Any:
    """Lease the row of ``code`` to this reviewer, or renew their lease (the page does
    while it shows the row); 409 when another reviewer holds it."""
    context = who.context
    try:
        with _answers():
            leased = acquire(
                context.project, code, who.name, minutes=context.lease_minutes, db=context.store
            )
    except LeaseHeldError as exc:
        return _lease_held(exc)
    return _shown(leased.to_dict(), state)


@router.delete("/v1/review/rows/{code:path}/lease", status_code=204, tags=["review"])
def give_back(code: RowCode, who: Reviewer = Depends(reviewer)) -> Response:
    """Give the row back without deciding (skip); 204 whether or not it was held."""
    context = who.context
    with _answers():
        release(context.project, code, who.name, db=context.store)
    return Response(status_code=204)


@router.get("/v1/review/rows/{code:row_code}", response_model=RowOut, tags=["review"])
def row(
    code: RowCode,
    who: Reviewer = Depends(reviewer),
    state: ServiceState = Depends(ready_state),
) -> Any:
    """One row with its candidates and decision history (no lease taken)."""
    with _answers():
        return _shown(show_row(who.context.project, code, db=who.context.store).to_dict(), state)


@router.post(
    "/v1/review/rows/{code:path}/decisions",
    response_model=DecidedOut,
    tags=["review"],
    responses=_CONFLICT,
)
def decide(
    code: RowCode,
    body: DecisionIn,
    who: Reviewer = Depends(reviewer),
    state: ServiceState = Depends(ready_state),
) -> Any:
    """Record this reviewer's decision on the row as they saw it (``version``): appended to
    the audit trail under their name; their lease is given back (a comment keeps it). 409,
    nothing written, when another reviewer holds the row or it changed since. A picked
    ``concept_id`` must be a concept of the served index (bare and alternative IDs resolve;
    422 otherwise); the decision carries the index's ID and name."""
    context = who.context
    try:
        with _answers():
            record = decide_leased(
                context.project,
                code,
                body.action,
                reviewer=who.name,
                version=body.version,
                concept_id=body.concept_id,
                concept_name=body.concept_name,
                predicate=body.predicate,
                comment=body.comment,
                concepts=index_concepts(state.space.index),
                db=context.store,
            )
    except LeaseHeldError as exc:
        return _lease_held(exc)
    except StaleRowError as exc:
        with _answers():
            now = _shown(show_row(context.project, code, db=context.store).to_dict(), state)
        message = (
            f"row {code!r} changed since version {exc.expected} (now version {exc.current}, "
            "shown in row): nothing written; look at it again and decide on the new version"
        )
        return _conflict(message, ["body", "version"], "row_changed", row=now)
    return record.to_dict()
