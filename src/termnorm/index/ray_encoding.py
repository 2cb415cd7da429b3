"""Shards of an index build encoded by a pool of Ray actors (``termnorm index build --engine ray``).

Each actor loads the encoder once from an :class:`EncoderSpec` (the same folder, pooling,
max length, concrete runtime and device as the driver's encoder) and then encodes one shard
per call with :func:`~termnorm.index.encoding.encode_shard`, exactly as the local engine
does, returning the float16 vectors to the driver; the driver writes the shard files, so the
workers need the model folder but no shared output folder. Before any shard is sent, every
actor's model fingerprint, runtime and dimension are checked against the driver's (a node
with another model at the same path is refused by name).

:class:`ray.util.ActorPool` hands the next shard to whichever actor is free, and results
come back as they finish (the driver's progress bar follows them). With ``device="cuda"``
each actor asks Ray for one GPU. An actor that dies (a killed worker) is restarted and its
shard retried by Ray (:data:`RETRIES` times); a killed driver loses only the shards in
flight, and the same command resumes from the written ones.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from termnorm.encoders.device import resolve_device
from termnorm.engines import RayWorkerError, import_ray, ray_session
from termnorm.errors import ArtifactMismatchError, TermnormError
from termnorm.index.encoding import OnBatch, encode_shard
from termnorm.index.shards import Shard

if TYPE_CHECKING:  # pragma: no cover
    from termnorm.encoders import TermEncoder

__all__ = ["RETRIES", "EncoderSpec", "RayEngine", "encoder_identity"]

logger = logging.getLogger(__name__)

RETRIES = 3  # actor restarts, and retries of the shard a dead actor held


@dataclass(frozen=True)
class EncoderSpec:
    """What a worker needs to load the driver's encoder: every field decides the vectors."""

    path: str
    pooling: str
    max_length: int
    runtime: str  # concrete (never ``auto``: each machine could pick another)
    device: str
    threads: int | None = None

    def load(self) -> TermEncoder:
        """The encoder, bound to the runtime on the device."""
        from termnorm.encoders import TermEncoder

        return TermEncoder.load(
            self.path,
            pooling=self.pooling,
            max_length=self.max_length,
            device=self.device,
            runtime=self.runtime,
            threads=self.threads,
        )


def encoder_identity(encoder: Any) -> dict[str, Any]:
    """What must agree between the driver's encoder and a worker's: fingerprint, dimension,
    runtime (and the int8 layout for ``onnx-int8``)."""
    from termnorm.encoders.fidelity import runtime_record

    record = runtime_record(encoder)
    record.pop("runtime_cosine", None)  # measured per process; the layout decides the vectors
    return {"fingerprint": encoder.fingerprint, "dimension": int(encoder.dimension), **record}


class _ShardActor:
    """A Ray actor: loads the encoder once, then encodes the shards it is given."""

    def __init__(self, spec: EncoderSpec, batch_size: int) -> None:
        # a failed constructor reaches the driver as a bare ActorDiedError: keep the cause
        self.error: str | None = None
        self.batch_size = batch_size
        try:
            self.encoder = spec.load()
        except (TermnormError, ValueError, OSError) as exc:
            self.error = f"{type(exc).__name__}: {exc}"

    def identity(self) -> dict[str, Any]:
        """:func:`encoder_identity` of this actor's encoder, with its host name."""
        import socket

        if self.error is not None:
            return {"error": self.error, "host": socket.gethostname()}
        return {**encoder_identity(self.encoder), "host": socket.gethostname()}

    def encode(self, index: int, texts: list[str]) -> tuple[int, np.ndarray | None, str]:
        """``(index, float16 vectors, "")``, or ``(index, None, error)``."""
        try:
            if self.error is not None:
                raise ArtifactMismatchError(self.error)
            return index, encode_shard(self.encoder, texts, self.batch_size), ""
        except (TermnormError, ValueError, OSError) as exc:
            return index, None, f"{type(exc).__name__}: {exc}"


def _surviving(results: Iterator[Any], ray: Any) -> Iterator[Any]:
    """``results``, with a worker that died more than :data:`RETRIES` times turned into a
    :class:`RayWorkerError` that says the finished shards are kept (rerun to resume)."""
    try:
        yield from results
    except ray.exceptions.RayActorError as exc:
        raise RayWorkerError(
            f"a Ray worker died ({type(exc).__name__}) after {RETRIES} restarts; the shards "
            "finished so far are kept: rerun the same command to encode the missing ones, "
            "and check the workers' memory (`ray status`, the raylet logs)"
        ) from exc


class RayEngine:
    """Shards encoded by ``workers`` Ray actors (module doc); a context manager holding the
    Ray session (a local Ray with ``workers`` CPUs, or the cluster at ``address``)."""

    def __init__(
        self,
        driver: TermEncoder,
        device: str,
        batch_size: int,
        workers: int = 1,
        address: str | None = None,
        threads: int | None = None,
    ) -> None:
        if workers < 1:
            raise ValueError(f"--workers must be at least 1, got {workers}")
        if driver.path is None:
            raise ArtifactMismatchError(
                "--engine ray needs a model folder the workers can load; save the encoder first"
            )
        self.ray = import_ray()
        self.driver, self.batch_size = driver, batch_size
        self.workers, self.address = workers, address
        self.requested = device
        self.device = "cpu"  # resolved against the cluster's GPUs on entering
        self.runtime, self.threads = driver.runtime.value, threads
        self._session: Any = None

    def __enter__(self) -> RayEngine:
        self._session = ray_session(self.ray, self.address, self.workers)
        self._session.__enter__()
        try:
            gpus = int(self.ray.cluster_resources().get("GPU", 0))
            self.device = resolve_device(self.requested, self.runtime, gpus=gpus)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        if self._session is not None:
            self._session.__exit__(None, None, None)
            self._session = None

    def describe(self) -> dict[str, Any]:
        """``engine: ray``, the workers and the device they encode on."""
        return {"engine": "ray", "workers": self.workers, "device": self.device}

    def encode(
        self, shards: Sequence[Shard], texts: pd.Index, on_batch: OnBatch | None = None
    ) -> Iterator[tuple[Shard, np.ndarray]]:
        """Each shard's vectors as an actor finishes it (module doc). ``on_batch`` is not
        called: the workers' batches stay on the workers, the caller counts whole shards."""
        if not shards:
            return
        ray = self.ray
        spec = EncoderSpec(
            str(self.driver.path),
            self.driver.pooling.value,
            self.driver.max_length,
            self.runtime,
            self.device,
            self.threads,
        )
        actor = ray.remote(
            num_cpus=1,
            num_gpus=1 if self.device == "cuda" else 0,
            max_restarts=RETRIES,
            max_task_retries=RETRIES,
        )(_ShardActor)
        actors = [
            actor.remote(spec, self.batch_size) for _ in range(min(self.workers, len(shards)))
        ]
        self._check(ray.get([a.identity.remote() for a in actors]))
        by_index = {s.index: s for s in shards}
        pool = ray.util.ActorPool(actors)
        results = pool.map_unordered(
            lambda a, s: a.encode.remote(s.index, list(texts[s.start : s.stop])), shards
        )
        try:
            for index, vectors, error in _surviving(results, ray):
                if error:
                    raise RayWorkerError(f"shard {index}: {error}")
                yield by_index[index], vectors
        finally:
            for a in actors:
                ray.kill(a)

    def _check(self, identities: list[dict[str, Any]]) -> None:
        """Refuse workers whose encoder is not the driver's."""
        expected = encoder_identity(self.driver)
        for got in identities:
            host = got.pop("host", "?")
            if "error" in got:
                raise RayWorkerError(f"a worker on {host} could not load the model: {got['error']}")
            if got != expected:
                diff = [
                    f"{k}: {expected.get(k)} here, {got.get(k)} there"
                    for k in expected
                    if got.get(k) != expected.get(k)
                ]
                raise RayWorkerError(
                    f"the worker on {host} loads another encoder than this driver "
                    f"({'; '.join(diff)}); give every node the same model folder (same path) "
                    "and CPU kind, or use --engine local"
                )
