"""The Ray engine of ``annotate_file`` (:mod:`termnorm.annotate.batch`): chunks of documents
mapped over a pool of Ray actors, committed by the driver in order.

The driver reads the documents still to do (those after the resumed job's finished ones) and
cuts them into chunks of ``chunk_docs``, numbered in document order; Ray Data maps the chunks
through ``workers`` actors (:func:`~termnorm.engines.map_on_actors`), each building its
:class:`~termnorm.annotate.pipeline.Annotator` once (from the spec: each loads the index
folder) and rendering each chunk with :func:`~termnorm.annotate.chunks.annotate_chunk`, the
local engine's function. The actors send the rendered chunks back; the driver alone writes:
it commits chunk ``n`` as the next part as soon as chunks ``0..n`` are back, so the work
folder, the resume after a kill and the output are the local engine's.

The documents travel to the actors with the chunks: on a cluster (``address``) only the index
folder must be at the same path on every node (and termnorm installed there). The driver holds
the texts of the documents still to do until they are sent.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from termnorm.annotate.chunks import RenderedChunk, annotate_chunk, commit_chunk
from termnorm.annotate.formats import InputDocument, OutputFormat
from termnorm.engines import RayWorkerError, import_ray, map_on_actors, ray_session
from termnorm.errors import TermnormError

if TYPE_CHECKING:
    from termnorm.annotate.spec import AnnotateSpec
    from termnorm.io.resumable import ResumableParts
    from termnorm.search.spec import PipelineSpec

__all__ = ["annotate_on_ray", "ray_job"]


def ray_job(spec: PipelineSpec) -> tuple[PipelineSpec, dict[str, Any]]:
    """``spec`` as the actors build it (its index folder resolved) and what the job records
    of it (:func:`~termnorm.search.job.ray_job_settings`);
    :class:`~termnorm.errors.MissingExtraError` without ``termnorm[ray]``, before any work."""
    from termnorm.search.job import ray_job_settings

    import_ray()
    return ray_job_settings(spec)


class _ChunkWorker:
    """A Ray Data callable class: builds its annotator once, then renders each chunk of
    documents it is given (a batch of one chunk) and returns it as JSON text."""

    def __init__(self, spec: AnnotateSpec, fmt: str) -> None:
        # an error here (a bad rules file...) is reported by the first call: Ray reports a
        # failed constructor as a bare ActorDiedError, a failed call with its cause
        self.error: Exception | None = None
        try:
            from termnorm.annotate.detectors import build_annotator

            self.annotator = build_annotator(spec)
        except (TermnormError, ValueError, OSError) as exc:
            self.error = exc
        self.fmt = OutputFormat(fmt)

    def __call__(self, batch: dict[str, Any]) -> dict[str, list[Any]]:
        done: dict[str, list[Any]] = {"index": [], "chunk": [], "error": []}
        for index, documents in zip(batch["index"], batch["documents"], strict=True):
            try:
                if self.error is not None:
                    raise self.error
                docs = [InputDocument(*doc) for doc in json.loads(str(documents))]
                chunk, error = annotate_chunk(self.annotator, docs, self.fmt).to_json(), ""
            except (TermnormError, ValueError, OSError) as exc:
                # Ray hands the driver a wrapper without the cause: send the message itself
                chunk, error = "", f"{type(exc).__name__}: {exc}"
            done["index"].append(int(index))
            done["chunk"].append(chunk)
            done["error"].append(error)
        return done


def annotate_on_ray(
    work: tuple[AnnotateSpec, OutputFormat],
    readers: Sequence[Callable[[], InputDocument]],
    chunk_docs: int,
    workers: int,
    address: str | None,
    parts: ResumableParts,
    bar: Any,
) -> None:
    """Annotate the documents of ``readers`` after ``parts.rows_done`` on ``workers`` actors
    (``work``: the annotate spec and format each actor renders with) and commit their chunks
    into ``parts`` in order, counting them into ``bar``; :class:`RayWorkerError` naming the
    chunk when an actor could not render one (the chunks before it stay committed)."""
    ray = import_ray()
    spec, fmt = work
    starts = range(parts.rows_done, len(readers), chunk_docs)
    items = [
        {"index": n, "documents": json.dumps([read() for read in readers[s : s + chunk_docs]])}
        for n, s in enumerate(starts)
    ]
    if not items:
        return
    pending: dict[int, RenderedChunk] = {}
    committed = 0
    with ray_session(ray, address, workers):
        args = (spec, fmt.value)
        for done in map_on_actors(ray, items, _ChunkWorker, args, workers):
            n = int(done["index"])
            if done["error"]:
                first = starts[n]
                raise RayWorkerError(
                    f"chunk {n} (documents {first + 1}-{min(first + chunk_docs, len(readers))}): "
                    f"{done['error']}"
                )
            pending[n] = RenderedChunk.from_json(str(done["chunk"]))
            while committed in pending:  # in document order, whatever order they came in
                chunk = pending.pop(committed)
                commit_chunk(parts, chunk, fmt)
                bar.update(chunk.counts.documents)
                committed += 1
