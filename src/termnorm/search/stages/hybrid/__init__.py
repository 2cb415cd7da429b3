"""Hybrid recall (BioSyn): dense and char 3-gram TF-IDF candidates, one weighted score.

:mod:`.matcher` scores, :mod:`.fit` fits the weight (``termnorm rank hybrid``), :mod:`.card`
reads the card back; :func:`apply` is the stage of :data:`termnorm.search.stages.STAGES`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from termnorm.search.candidate import RowMatcher
    from termnorm.search.domain import SearchSpace
    from termnorm.search.spec import PipelineSpec

__all__ = ["apply"]


def apply(spec: PipelineSpec, matcher: RowMatcher, space: SearchSpace, artifact: Any) -> RowMatcher:
    """``matcher`` (the dense recall) merged with TF-IDF candidates by the card ``artifact``;
    :class:`~termnorm.errors.ArtifactMismatchError` for a card fitted on another index."""
    from termnorm.search.space_matcher import SpaceMatcher
    from termnorm.search.stages.hybrid.card import load_hybrid

    if not isinstance(matcher, SpaceMatcher):
        raise TypeError(f"hybrid recall needs a strategy's dense recall, not {matcher.name}")
    return load_hybrid(artifact, matcher)
