"""``--synonyms FILE --strategy NAME`` of ``termnorm normalize`` and ``termnorm eval normalize``.

Turns the command's plain :class:`~termnorm.search.Normalizer` into a search strategy or sieve
over the same index and encoder (:mod:`termnorm.search.strategies`, :mod:`termnorm.search.sieve`),
with the domain synonyms of ``--synonyms`` added at search time: only they are encoded.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

if TYPE_CHECKING:  # pragma: no cover - registering the commands stays cheap
    from termnorm.search.normalizer import Normalizer

__all__ = [
    "DEFAULT_SIEVE_THRESHOLD",
    "DEFAULT_WITH_SYNONYMS",
    "STRATEGY_HELP",
    "SYNONYMS_HELP",
    "THRESHOLD_HELP",
    "strategy_matcher",
]

logger = logging.getLogger(__name__)

DEFAULT_WITH_SYNONYMS = "d-t+od-t"
DEFAULT_SIEVE_THRESHOLD = 0.95  # termnorm.search.sieve's, repeated so that importing is free
STRATEGY_HELP = (
    "Search strategy: o-t, o-c, d-t, d-c, od-t, od-c (target O ontology / D domain synonyms / "
    "OD both, T text or C concept vectors) or a sieve FIRST+SECOND such as d-t+od-t "
    f"(the first module's answer when its cosine >= --sieve-threshold). Default with "
    f"--synonyms: {DEFAULT_WITH_SYNONYMS}."
)
SYNONYMS_HELP = (
    "Domain synonyms added at search time (no retraining, only they are encoded): a "
    "concept_id<TAB>text file or an annotated mention file (pubtator, biosyn, ...)."
)
THRESHOLD_HELP = "Cosine at or above which a sieve takes its first module's answer."


def strategy_matcher(
    normalizer: Normalizer,
    strategy: str | None,
    synonyms: Path | None,
    threshold: float = DEFAULT_SIEVE_THRESHOLD,
    synonyms_format: str | None = None,
) -> Any:
    """The strategy matcher over ``normalizer``'s index and encoder; it answers
    ``normalize_rows``/``normalize_batch`` like the normalizer (same query checks)."""
    from termnorm.search.domain import SearchSpace
    from termnorm.search.normalizer import SearchMode
    from termnorm.search.sieve import build_strategy

    if normalizer.mode is not SearchMode.TERM:
        raise typer.BadParameter("--mode concept and --strategy exclude each other; use o-c")
    space = SearchSpace.from_index(normalizer.index, normalizer.encoder)
    if synonyms is not None:
        from termnorm.mentions.synonyms import read_synonyms

        space, report = space.with_synonyms(read_synonyms(synonyms, synonyms_format))
        dropped = ", ".join(f"{n} {why}" for why, n in sorted(report.dropped.items()))
        typer.echo(
            f"domain synonyms from {synonyms}: {report.kept} added ({report.encoded_texts} "
            f"texts encoded)" + (f"; dropped: {dropped}" if dropped else ""),
            err=True,
        )
    matcher = build_strategy(space, strategy or DEFAULT_WITH_SYNONYMS, threshold)
    matcher.max_chars = normalizer.max_chars
    return matcher
