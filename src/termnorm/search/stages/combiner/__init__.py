"""The learned combiner: P(candidate is correct) from recall, lexical and ranker features.

:mod:`.model` holds the features and the logistic regression, :mod:`.matcher` reorders a
recall stage by it, :mod:`.fit` fits it (``termnorm rank combine``), :mod:`.card` reads the
card back; :func:`apply` is the stage of :data:`termnorm.search.stages.STAGES`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from termnorm.search.candidate import RowMatcher
    from termnorm.search.domain import SearchSpace
    from termnorm.search.spec import PipelineSpec

__all__ = ["apply"]


def apply(spec: PipelineSpec, matcher: RowMatcher, space: SearchSpace, artifact: Any) -> RowMatcher:
    """``matcher``'s top ``k_c`` reordered by the combiner card ``artifact``; ``spec.min_score`` is
    then a probability threshold."""
    from termnorm.search.stages.combiner.card import load_combined

    return load_combined(artifact, matcher, spec.min_score, spec.threads)
