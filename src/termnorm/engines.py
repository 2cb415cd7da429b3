"""Where work runs: this process (``local``) or a Ray cluster (``ray``), and the Ray session
both Ray engines share (batch files, :mod:`termnorm.search.ray_batch` and
:mod:`termnorm.annotate.batch`; index builds, :mod:`termnorm.index.ray_encoding`), and the
actor pool the batch files map their chunks over (:func:`map_on_actors`).

Import-free at module level (the CLI reads :class:`Engine` while registering its commands);
``ray`` is imported by :func:`import_ray` when a Ray engine runs.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator, Sequence
from enum import Enum
from typing import Any

from termnorm.errors import MissingExtraError, RayWorkerError

__all__ = ["Engine", "RayWorkerError", "import_ray", "map_on_actors", "ray_session"]


class Engine(str, Enum):
    """``local``: this process; ``ray``: a pool of Ray actors (a local Ray, or a cluster)."""

    LOCAL = "local"
    RAY = "ray"


def import_ray() -> Any:
    """The ``ray`` module; :class:`~termnorm.errors.MissingExtraError` without ``termnorm[ray]``."""
    try:
        import ray
        import ray.data
        import ray.util
    except ImportError as exc:
        raise MissingExtraError("ray", "ray") from exc
    return ray


@contextlib.contextmanager
def ray_session(ray: Any, address: str | None, workers: int) -> Iterator[None]:
    """A Ray connection: the running one, else one to ``address`` (``ray://head:10001``,
    ``auto``), else a local Ray with ``workers`` CPUs (and this machine's GPUs); shut down
    afterwards when this call started it."""
    if ray.is_initialized():
        yield
        return
    if address is None:
        ray.init(num_cpus=workers, include_dashboard=False, logging_level=logging.WARNING)
    else:
        ray.init(address=address, logging_level=logging.WARNING)
    try:
        yield
    finally:
        ray.shutdown()


def map_on_actors(
    ray: Any,
    items: Sequence[dict[str, Any]],
    worker: type,
    args: tuple[Any, ...],
    workers: int,
) -> Iterator[dict[str, Any]]:
    """Map ``items`` one at a time through a pool of ``workers`` actors of the Ray Data
    callable class ``worker`` (built once per actor from ``args``); yields each output row as
    it comes (not necessarily in ``items`` order). Ray's own progress bars are off: the
    callers show theirs."""
    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = False
    dataset = ray.data.from_items(list(items), override_num_blocks=len(items))
    mapped = dataset.map_batches(
        worker,
        fn_constructor_args=args,
        batch_size=1,
        compute=ray.data.ActorPoolStrategy(size=workers),
        num_cpus=1,
    )
    yield from mapped.iter_rows()
