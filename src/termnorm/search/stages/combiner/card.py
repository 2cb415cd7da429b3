"""A combiner card (``termnorm rank combine``) read back over a recall stage."""

from __future__ import annotations

from pathlib import Path

from termnorm.search.candidate import RowMatcher
from termnorm.search.stages.cards import read_json_card
from termnorm.search.stages.combiner.matcher import CombinedMatcher
from termnorm.search.stages.combiner.model import Combiner, tfidf_of

__all__ = ["CARD_KIND", "load_combined"]

CARD_KIND = "combiner"


def load_combined(
    path: str | Path,
    recall: RowMatcher,
    min_probability: float | None = None,
    threads: int | None = None,
) -> CombinedMatcher:
    """The combined matcher of the card at ``path`` over ``recall`` (loading the card's
    ranker when it uses one); refused on an index other than the card's."""
    from termnorm.search.stages.ranker.ranker import load_ranker

    card = read_json_card(path, CARD_KIND, "rank combine", getattr(recall, "index", None))
    combiner = Combiner.from_dict(card["combiner"])
    ranker = None
    if combiner.uses_ranker:
        ranker = load_ranker(Path(card["ranker"]), threads=threads)
    return CombinedMatcher(
        recall, combiner, tfidf_of(recall), int(card["k_c"]), ranker, min_probability
    )
