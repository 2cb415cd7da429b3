"""A hybrid recall card (``termnorm rank hybrid``) read back over a dense recall stage."""

from __future__ import annotations

import logging
from pathlib import Path

from termnorm.search.space_matcher import SpaceMatcher
from termnorm.search.stages.cards import read_json_card
from termnorm.search.stages.hybrid.matcher import HybridConfig, HybridMatcher

__all__ = ["CARD_KIND", "load_hybrid"]

logger = logging.getLogger(__name__)

CARD_KIND = "hybrid-recall"


def load_hybrid(path: str | Path, dense: SpaceMatcher) -> HybridMatcher:
    """The hybrid matcher of the card at ``path`` over ``dense``; refused
    (:class:`~termnorm.errors.ArtifactMismatchError`) on an index other than the card's."""
    card = read_json_card(path, CARD_KIND, "rank hybrid", dense.index)
    if card.get("strategy") != dense.name:
        logger.warning(
            "the hybrid weight was fitted with %s; recalling with %s", card["strategy"], dense.name
        )
    config = HybridConfig(float(card["weight"]), int(card["k_dense"]), int(card["k_sparse"]))
    return HybridMatcher(dense, config)
