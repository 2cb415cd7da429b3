"""Dynamic micro-batching: the texts (or documents) of concurrent requests are worked on
together.

A :class:`MicroBatcher` keeps a bounded queue of requests waiting to be encoded (the
service's second one, of documents, annotates them: ``POST /v1/annotate``). Its worker
takes the first waiting request, then waits until the queue holds ``max_texts`` texts or
``max_wait_s`` has passed since it started collecting, and encodes the requests it took
(whole requests, in arrival order, at most ``max_texts`` texts unless one request alone is
larger) in one call on its single encoding thread. Each request gets back the rows of its
own texts, in order. With ``max_wait_s=0`` and ``max_texts=1`` each request is encoded alone.
When encoding a batch of several requests fails, each of them is encoded again on its own:
only a request that fails alone gets the error, so one bad request never fails another.

A request that would bring the queue above ``max_queued`` texts is refused at once with
:class:`QueueFullError` (the service answers 503 with ``Retry-After``): the queue never
grows without bound and no caller waits forever. Everything run on the encoding thread
(:meth:`MicroBatcher.run_exclusive`) is serialised with the batches, so the encoder is never
used from two threads.

The service's search space encodes with a :class:`QueuedEncoder`: the matcher that
``build(spec)`` assembles over it encodes a request's texts through the batcher with the
sender that :func:`sending` installs for that request (:func:`queued_encoder`: at once or
waiting while the queue is full; an upload's slices), so there is no second matcher.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import numpy as np

__all__ = ["MicroBatcher", "QueueFullError", "QueuedEncoder", "queued_encoder", "sending"]

logger = logging.getLogger(__name__)

T = TypeVar("T")
Item = TypeVar("Item")
Rows = TypeVar("Rows")  # the rows of a batch's items, in order, sliced per request
Send = Callable[[list[str]], np.ndarray]
"""Texts to their vectors ``[n, d]`` through the batcher (:func:`queued_encoder`)."""

_QUEUE_FULL_WAIT_S = (0.01, 0.5)  # first and longest wait before offering texts again
_sender: ContextVar[Send | None] = ContextVar("termnorm_sender", default=None)


class QueueFullError(RuntimeError):
    """The encoding (or annotate) queue is full: retry after ``retry_after`` seconds;
    ``items``: what it holds, the request's field (``texts``, ``documents``)."""

    def __init__(
        self, queued: int, asked: int, limit: int, retry_after: int, what: str = "encoding"
    ) -> None:
        self.items = "texts" if what == "encoding" else "documents"
        super().__init__(
            f"the {what} queue is full ({queued} {self.items} waiting, {asked} more asked, "
            f"limit {limit}): retry after {retry_after} s"
        )
        self.retry_after = retry_after


@dataclass
class _Job(Generic[Item, Rows]):
    texts: list[Item]
    future: asyncio.Future[Rows]


class MicroBatcher(Generic[Item, Rows]):
    """Encode the texts of concurrent callers together; see the module docstring.

    ``encode`` maps texts to vectors ``[n, d]`` in order (or any items to their rows, which
    slice as a list does: ``what`` names the queue in its errors, e.g. ``"annotate"``);
    ``on_batch(n_texts)`` is called per encoded batch (metrics). Use inside a running event
    loop: :meth:`start`, then :meth:`encode` from any task, then :meth:`stop`.
    """

    def __init__(
        self,
        encode: Callable[[list[Item]], Rows],
        max_texts: int = 64,
        max_wait_s: float = 0.005,
        max_queued: int = 1024,
        on_batch: Callable[[int], None] | None = None,
        what: str = "encoding",
    ) -> None:
        self._encode = encode
        self.max_texts = max_texts
        self.max_wait_s = max_wait_s
        self.max_queued = max_queued
        self.what = what
        self._on_batch = on_batch
        self._queue: deque[_Job[Item, Rows]] = deque()
        self._queued = 0
        self._wake: asyncio.Event | None = None
        self._worker: asyncio.Task[None] | None = None
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"termnorm-{what}")

    @property
    def queued(self) -> int:
        """Texts waiting to be encoded (the batch being encoded not included)."""
        return self._queued

    def start(self) -> None:
        """Start the worker task on the running loop."""
        self._wake = asyncio.Event()
        self._worker = asyncio.get_running_loop().create_task(self._run())

    async def stop(self) -> None:
        """Stop the worker; requests still waiting fail with ``RuntimeError``."""
        if self._worker is not None:
            self._worker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._worker
            self._worker = None
        while self._queue:
            job = self._queue.popleft()
            if not job.future.done():
                job.future.set_exception(RuntimeError("the service is shutting down"))
        self._queued = 0
        self._thread.shutdown(wait=True)

    async def encode(self, texts: Sequence[Item]) -> Rows:
        """Vectors of ``texts`` ``[len(texts), d]`` (the rows of the items), encoded with
        other callers' texts; :class:`QueueFullError` at once when the queue has no room."""
        if self._wake is None:
            raise RuntimeError("MicroBatcher.start() was not called")
        if self._queued + len(texts) > self.max_queued:
            raise QueueFullError(self._queued, len(texts), self.max_queued, 1, self.what)
        job: _Job[Item, Rows] = _Job(list(texts), asyncio.get_running_loop().create_future())
        self._queue.append(job)
        self._queued += len(job.texts)
        self._wake.set()
        return await job.future

    async def run_exclusive(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` on the encoding thread, between batches."""
        return await asyncio.get_running_loop().run_in_executor(self._thread, fn)

    # ------------------------------------------------------------------ worker
    async def _run(self) -> None:
        assert self._wake is not None
        loop = asyncio.get_running_loop()
        while True:
            while not self._queue:
                self._wake.clear()
                await self._wake.wait()
            deadline = loop.time() + self.max_wait_s
            while self._queued < self.max_texts and (left := deadline - loop.time()) > 0:
                self._wake.clear()
                try:
                    await asyncio.wait_for(self._wake.wait(), left)
                except asyncio.TimeoutError:  # TimeoutError from Python 3.11
                    break
            jobs = self._take()
            texts = [t for job in jobs for t in job.texts]
            try:
                vectors = await loop.run_in_executor(self._thread, self._encode, texts)
            except Exception as exc:
                if len(jobs) == 1:
                    logger.exception("encoding a request of %d texts failed", len(texts))
                    _settle(jobs[0], None, exc)
                    continue
                logger.warning(
                    "encoding a batch of %d requests failed: encoding each alone", len(jobs)
                )
                await self._encode_alone(jobs)
                continue
            if self._on_batch is not None:
                self._on_batch(len(texts))
            start = 0
            for job in jobs:
                end = start + len(job.texts)
                _settle(job, vectors[start:end], None)  # type: ignore[index]  # rows slice
                start = end

    async def _encode_alone(self, jobs: list[_Job[Item, Rows]]) -> None:
        """Encode each job of a failed batch on its own: only the jobs that fail alone get
        the error, so one bad request never fails the others."""
        loop = asyncio.get_running_loop()
        for job in jobs:
            if job.future.done():  # its caller went away
                continue
            try:
                vectors = await loop.run_in_executor(self._thread, self._encode, job.texts)
            except Exception as exc:
                logger.exception("encoding a request of %d texts failed", len(job.texts))
                _settle(job, None, exc)
                continue
            if self._on_batch is not None:
                self._on_batch(len(job.texts))
            _settle(job, vectors, None)

    def _take(self) -> list[_Job[Item, Rows]]:
        """Whole jobs from the front: at least one, then while they fit in ``max_texts``."""
        jobs = [self._queue.popleft()]
        size = len(jobs[0].texts)
        while self._queue and size + len(self._queue[0].texts) <= self.max_texts:
            job = self._queue.popleft()
            size += len(job.texts)
            jobs.append(job)
        self._queued -= size
        return jobs


def _settle(job: _Job[Any, Any], vectors: Any, error: BaseException | None) -> None:
    """Give ``job`` its vectors or its error, unless its caller went away."""
    if job.future.done():
        return
    if error is not None:
        job.future.set_exception(error)
    elif vectors is not None:
        job.future.set_result(vectors)


def queued_encoder(
    batcher: MicroBatcher[str, np.ndarray],
    loop: asyncio.AbstractEventLoop,
    wait_when_full: bool = True,
) -> Send:
    """An ``encode(texts)`` for worker threads that goes through ``batcher`` on ``loop``,
    offering the texts again (after a growing wait) while the queue is full, or, without
    ``wait_when_full`` (an interactive request), raising :class:`QueueFullError` at once."""

    def encode(texts: list[str]) -> np.ndarray:
        wait = _QUEUE_FULL_WAIT_S[0]
        while True:
            future = asyncio.run_coroutine_threadsafe(batcher.encode(texts), loop)
            try:
                return future.result()
            except QueueFullError:
                if not wait_when_full:
                    raise
                time.sleep(wait)
                wait = min(2 * wait, _QUEUE_FULL_WAIT_S[1])

    return encode


def sending(send: Send, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``fn(*args, **kwargs)`` (a request's search, on a worker thread) with every
    :class:`QueuedEncoder` encoding sent through ``send``."""
    token = _sender.set(send)
    try:
        return fn(*args, **kwargs)
    finally:
        _sender.reset(token)


class QueuedEncoder:
    """The service's query encoder: ``encoder`` (its other attributes, such as
    ``fingerprint`` and ``path``, are ``encoder``'s), whose :meth:`encode` sends the texts
    through the sender of the running request (:func:`sending`). Outside a request (start-up,
    the batcher's own thread, synonyms added on the encoding thread) it encodes directly."""

    def __init__(self, encoder: Any) -> None:
        self.encoder = encoder

    def __getattr__(self, name: str) -> Any:
        return getattr(self.encoder, name)

    def encode(self, texts: Sequence[str], batch_size: int = 256) -> np.ndarray:
        """Vectors ``[len(texts), d]``: through the request's sender, else ``encoder``'s."""
        send = _sender.get()
        if send is None:
            return np.asarray(self.encoder.encode(list(texts), batch_size=batch_size))
        return send(list(texts))
