"""The ranker: a keyword cross-encoder reordering a recall stage's top ``k_c`` candidates.

:mod:`.ranker` is its folder, :mod:`.matcher` the ranked matcher (fusion, multi-code),
:mod:`.training` its fit (``termnorm rank train``, settings in :mod:`.train_spec`),
:mod:`.loading` the cached loading; :func:`apply` is the stage of
:data:`termnorm.search.stages.STAGES`. The public names are :mod:`termnorm.search.rank`'s.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from termnorm.search.stages.ranker.loading import (
    implication_of,
    load_ranker,
    min_score_is_probability,
    rank_mode,
)

if TYPE_CHECKING:
    from termnorm.search.candidate import RowMatcher
    from termnorm.search.domain import SearchSpace
    from termnorm.search.spec import PipelineSpec

__all__ = ["apply"]


def apply(spec: PipelineSpec, matcher: RowMatcher, space: SearchSpace, artifact: Any) -> RowMatcher:
    """``matcher`` followed by the ranker (``artifact``: a loaded one, or a folder, loaded
    once), ordered by ``spec.rank_mode``, with multi-code answers when ``spec.multi``."""
    from termnorm.search.stages.ranker.matcher import RankedMatcher

    ranker = load_ranker(artifact, spec.threads) if isinstance(artifact, str | Path) else artifact
    probability = min_score_is_probability(spec, ranker)
    return RankedMatcher(
        matcher,
        ranker,
        k_c=spec.k_c,
        mode=rank_mode(spec, ranker),
        weight=spec.fusion_weight,
        theta=spec.theta,
        implication=implication_of(spec, space) if spec.multi else None,
        min_probability=spec.min_score if probability else None,
    )
