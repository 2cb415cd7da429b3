"""The plain embedding normalizer: query → encoder → nearest terms or concepts of an index.

:class:`Normalizer` is a thin name for the one matcher (:class:`~termnorm.search.SpaceMatcher`)
configured as O-T (``mode="term"``: the index's term vectors, a concept scoring as its best
term) or O-C (``mode="concept"``: the index's concept mean vectors, ``matched_term`` the
concept's name), over the index alone. Everything else — validation, over-fetching, the tie
rule, provenance — is the matcher's (see :mod:`termnorm.search.space_matcher`).
"""

from __future__ import annotations

from termnorm.index.term_index import Encoder, TermIndex
from termnorm.search.domain import SearchSpace
from termnorm.search.query import DEFAULT_MAX_CHARS
from termnorm.search.space_matcher import SearchConfig, SpaceMatcher
from termnorm.search.strategies import SearchMode

__all__ = ["Normalizer"]


class Normalizer(SpaceMatcher):
    """Top-``k`` concepts of ``index`` for query texts, encoded with the index's ``encoder``
    (refused with :class:`~termnorm.errors.ArtifactMismatchError` when it is another)."""

    def __init__(
        self,
        index: TermIndex,
        encoder: Encoder,
        mode: SearchMode | str = SearchMode.TERM,
        max_chars: int = DEFAULT_MAX_CHARS,
        batch_size: int = 256,
    ) -> None:
        self.mode = SearchMode(mode)
        super().__init__(
            SearchSpace(index, encoder),
            SearchConfig(self.mode.strategy, max_chars=max_chars),
            name=self.mode.matcher_name,
            batch_size=batch_size,
        )
