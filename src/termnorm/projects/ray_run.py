"""``map run --engine ray``: a project's search on a pool of Ray actors, its writes in the driver.

Each of ``workers`` actors builds the project's matcher once (``build(spec, synonyms)``: the
builder must pickle, as :func:`termnorm.api.project_matcher` does). The driver keeps
:func:`~termnorm.projects.run.run_project`'s loop; :class:`RayRowMatcher` cuts each batch's
texts into one slice per actor, and only the driver writes the database, so resume and
answers are the local engine's. The Ray session is :func:`termnorm.engines.ray_session`: a
local Ray with ``workers`` CPUs, or the cluster at ``address`` (nodes must see the index at
the same path).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from termnorm.engines import RayWorkerError, import_ray, ray_session
from termnorm.errors import TermnormError
from termnorm.projects.settings import MatcherBuilder

if TYPE_CHECKING:
    from termnorm.search.candidate import RowMatcher, RowResult
    from termnorm.search.spec import PipelineSpec

__all__ = ["RayRowMatcher", "ray_matcher"]


class _MatchActor:
    """One Ray actor's matcher; answers ``(results, error)`` so that the driver gets the
    worker's message (Ray reports a failed constructor as a bare ``ActorDiedError``)."""

    def __init__(self, build: MatcherBuilder, spec: PipelineSpec, synonyms: Any) -> None:
        self.error = ""
        self.matcher: RowMatcher | None = None
        try:
            self.matcher = build(spec, synonyms)
        except (TermnormError, ValueError, OSError) as exc:
            self.error = f"{type(exc).__name__}: {exc}"

    def normalize_rows(self, texts: list[str], k: int) -> tuple[list[RowResult], str]:
        """The matcher's answers for ``texts``, or no answers and why."""
        if self.matcher is None:
            return [], self.error
        try:
            return self.matcher.normalize_rows(texts, k), ""
        except (TermnormError, ValueError, OSError) as exc:
            return [], f"{type(exc).__name__}: {exc}"


class RayRowMatcher:
    """A :class:`~termnorm.search.candidate.RowMatcher` over ``workers`` Ray actors: a batch
    of texts is cut into one contiguous slice per actor and the answers come back in input
    order. Needs a Ray session (:func:`ray_matcher` opens one)."""

    def __init__(
        self,
        ray: Any,
        build: MatcherBuilder,
        spec: PipelineSpec,
        synonyms: Sequence[tuple[str, str]],
        workers: int,
    ) -> None:
        if workers < 1:
            raise ValueError(f"--workers must be at least 1, got {workers}")
        actor = ray.remote(num_cpus=1)(_MatchActor)
        self._ray = ray
        self._actors = [actor.remote(build, spec, list(synonyms)) for _ in range(workers)]

    def normalize_rows(self, texts: Sequence[object], k: int = 5) -> list[RowResult]:
        """Each text's answer, searched on the actors; :class:`~termnorm.engines.RayWorkerError`
        with the worker's message when an actor could not build its matcher or search."""
        size = -(-len(texts) // len(self._actors)) or 1
        slices = [list(texts[i : i + size]) for i in range(0, len(texts), size)]
        refs = [
            actor.normalize_rows.remote(part, k)
            for actor, part in zip(self._actors, slices, strict=False)
        ]
        results: list[RowResult] = []
        for answers, error in self._ray.get(refs):
            if error:
                raise RayWorkerError(f"a map run worker failed: {error}")
            results.extend(answers)
        return results


@contextlib.contextmanager
def ray_matcher(
    build: MatcherBuilder,
    spec: PipelineSpec,
    synonyms: Sequence[tuple[str, str]],
    workers: int,
    address: str | None = None,
) -> Iterator[RayRowMatcher]:
    """A :class:`RayRowMatcher` of ``workers`` actors in a Ray session (see the module);
    :class:`~termnorm.errors.MissingExtraError` without ``termnorm[ray]``."""
    ray = import_ray()
    with ray_session(ray, address, workers):
        matcher = RayRowMatcher(ray, build, spec, synonyms, workers)
        try:
            yield matcher
        finally:
            for actor in matcher._actors:
                ray.kill(actor)
