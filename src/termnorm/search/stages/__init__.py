"""The learned stages after recall, one package each, and the registry :func:`build` applies.

A stage is a package (its card or folder, its matcher, its fit) plus one registration in
:data:`STAGES`: its name, ``apply(spec, matcher, space, artifact) -> matcher`` (which returns
``matcher`` followed by the stage; ``artifact``: the field's value, a card or folder path, or
what the caller already loaded in its place, such as the service's ranker) and, as its
``field`` fact, the :class:`~termnorm.search.spec.PipelineSpec` field that switches it on.
:func:`apply_stages` applies the stages whose artifact is given, in registry order: hybrid
recall (:mod:`.hybrid`), the combiner (:mod:`.combiner`), the ranker (:mod:`.ranker`), then
the senses of shorthand (:mod:`.shorthand`, not learned: a list named by its field). What
the three fits share lives once: :mod:`.fit_spec` (the training data and recall),
:mod:`.crossfit` (training queries, cross-fitted by document) and :mod:`.cards` (JSON cards
checked against the index).

Import-light: a stage's matcher and fit load when the stage is applied.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from termnorm.registry import Entry, Registry
from termnorm.search.stages import combiner, hybrid, ranker

if TYPE_CHECKING:
    from termnorm.search.candidate import RowMatcher
    from termnorm.search.domain import SearchSpace
    from termnorm.search.spec import PipelineSpec

__all__ = ["STAGES", "StageApply", "apply_stages", "stage_field", "stage_paths"]

StageApply = Callable[["PipelineSpec", "RowMatcher", "SearchSpace", Any], "RowMatcher"]

STAGES: Registry[StageApply] = Registry("stage", group="termnorm.stages")
"""The stages in the order a query walks them; a new stage is one registration here (or
``before=`` an existing one), its spec field named by the ``field`` fact."""
STAGES.register("hybrid", hybrid.apply, field="hybrid")
STAGES.register("combiner", combiner.apply, field="combiner")
STAGES.register("ranker", ranker.apply, field="ranker")
STAGES.register("shorthand", "termnorm.search.stages.shorthand:apply", field="shorthand")


def stage_field(stage: Entry[StageApply]) -> str:
    """The :class:`~termnorm.search.spec.PipelineSpec` field that switches ``stage`` on."""
    return str(stage.facts["field"])


def _artifact(stage: Entry[StageApply], spec: PipelineSpec, loaded: Mapping[str, Any]) -> Any:
    """What switches ``stage`` on: ``loaded[field]``, else ``spec``'s field (``None``: off).
    ``AttributeError`` when ``spec`` has no such field (a stage registered for another spec
    class)."""
    field = stage_field(stage)
    given = loaded.get(field)
    return getattr(spec, field) if given is None else given


def apply_stages(
    spec: PipelineSpec,
    matcher: RowMatcher,
    space: SearchSpace,
    loaded: Mapping[str, Any] | None = None,
    until: str | None = None,
) -> RowMatcher:
    """``matcher`` followed by every stage of :data:`STAGES` that ``spec`` switches on, in
    registry order; ``loaded``: artifacts the caller already loaded, by spec field;
    ``until``: only the stages before the one of this name (what a fit of it recalls)."""
    for stage in STAGES:
        if stage.name == until:
            break
        artifact = _artifact(stage, spec, loaded or {})
        if artifact is not None:
            matcher = stage.load()(spec, matcher, space, artifact)
    return matcher


def stage_paths(spec: PipelineSpec) -> Iterator[Path]:
    """The card files and folders ``spec``'s stages read (a built matcher's cache key)."""
    for stage in STAGES:
        value = getattr(spec, stage_field(stage))
        if isinstance(value, Path):
            yield value
