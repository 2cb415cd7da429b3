"""The search options shared by ``termnorm normalize`` and ``termnorm eval normalize``.

``--mode``, ``--synonyms FILE`` (repeatable, :func:`synonyms_option`, also ``rank train``'s
and ``serve``'s), ``--strategy NAME --sieve-threshold``, ``--min-score`` and the
filters ``--namespace`` / ``--type`` all configure the one matcher
(:class:`~termnorm.search.SpaceMatcher`) over the command's search space
(:func:`command_matcher`). Help texts and defaults are read without importing the search
code, so registering the commands stays cheap.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from termnorm.search.defaults import (
    DEFAULT_SIEVE_THRESHOLD,
    DEFAULT_WITH_SYNONYMS,
    default_strategy,
)

if TYPE_CHECKING:  # pragma: no cover - registering the commands stays cheap
    from termnorm.search.candidate import RowMatcher
    from termnorm.search.domain import SearchSpace
    from termnorm.search.matcher import SpaceMatcher

__all__ = [
    "COMBINER_HELP",
    "HYBRID_HELP",
    "MIN_SCORE_HELP",
    "MODE_HELP",
    "NAMESPACE_HELP",
    "STRATEGY_HELP",
    "SYNONYMS_HELP",
    "THRESHOLD_HELP",
    "TYPE_HELP",
    "check_mode",
    "command_matcher",
    "synonyms_option",
    "with_hybrid",
    "with_learned_stages",
]

STRATEGY_HELP = (
    "Search strategy: o-t, o-c, d-t, d-c, od-t, od-c (target O ontology / D domain synonyms / "
    "OD both, T text or C concept vectors) or a sieve FIRST+SECOND such as d-t+od-t "
    f"(the first module's answer when its cosine >= --sieve-threshold). Default with "
    f"--synonyms: {DEFAULT_WITH_SYNONYMS}."
)
SYNONYMS_HELP = (
    "Domain synonyms added at search time (no retraining, only they are encoded): a "
    "concept_id<TAB>text file or an annotated mention file (pubtator, biosyn, ...). "
    "Repeatable: every file's synonyms are added."
)
THRESHOLD_HELP = "Cosine at or above which a sieve takes its first module's answer."
MODE_HELP = "term: search term vectors (o-t); concept: concept mean vectors (o-c)."
MIN_SCORE_HELP = (
    "Abstain below this cosine: weaker candidates are dropped, a term left without any gets "
    "no concept (in files: an empty concept_id and the reason in error)."
)
NAMESPACE_HELP = "Only concepts of this ID namespace (HP for HP:0001250); repeatable."
TYPE_HELP = 'Only concepts of this semantic type ("Disease or Syndrome"); repeatable.'
HYBRID_HELP = (
    "Hybrid recall card (termnorm rank hybrid): the search's candidates and char 3-gram "
    "TF-IDF candidates merged, ordered by w*cosine + (1-w)*TF-IDF cosine with the card's w "
    "(--min-score then applies to that score)."
)


COMBINER_HELP = (
    "Learned combiner card (termnorm rank combine): the top k_c candidates reordered by the "
    "probability that each is correct (recall, TF-IDF, token and ranker features, logistic "
    "regression); --min-score is then a probability threshold."
)


def with_learned_stages(
    matcher: SpaceMatcher,
    hybrid: Path | None,
    combiner: Path | None,
    min_score: float | None = None,
    threads: int | None = None,
) -> RowMatcher:
    """``matcher``, then hybrid recall over it (card ``hybrid``), then the combiner (card
    ``combiner``), which takes ``min_score`` as a probability threshold."""
    recall = with_hybrid(matcher, hybrid)
    if combiner is None:
        return recall
    from termnorm.search.rank.combiner_fit import load_combined

    return load_combined(combiner, recall, min_score, threads)


def with_hybrid(matcher: SpaceMatcher, hybrid: Path | None) -> RowMatcher:
    """``matcher``, or the hybrid recall of the card ``hybrid`` over it."""
    if hybrid is None:
        return matcher
    from termnorm.search.rank.hybrid_fit import load_hybrid

    return load_hybrid(hybrid, matcher)


def synonyms_option() -> Any:
    """``--synonyms FILE``, repeatable (a ``list[Path] | None`` parameter): the one
    declaration of every command that takes domain synonym files."""
    return typer.Option(None, "--synonyms", help=SYNONYMS_HELP, exists=True)


def check_mode(mode: str) -> None:
    """Refuse a ``--mode`` other than term or concept (before anything is loaded)."""
    if mode not in ("term", "concept"):
        raise typer.BadParameter("--mode must be term or concept")


def command_matcher(
    space: SearchSpace,
    mode: str = "term",
    strategy: str | None = None,
    synonyms: Sequence[Path] | None = None,
    threshold: float = DEFAULT_SIEVE_THRESHOLD,
    synonyms_format: str | None = None,
    *,
    max_chars: int | None = None,
    min_score: float | None = None,
    namespaces: list[str] | None = None,
    semantic_types: list[str] | None = None,
) -> SpaceMatcher:
    """The matcher a command asked for: the plain normalizer of ``mode``, or ``strategy``
    (default :data:`~termnorm.search.defaults.DEFAULT_WITH_SYNONYMS`) over ``space`` plus the
    domain synonyms of every file of ``synonyms``; then ``max_chars``, ``min_score`` and the filters."""
    from termnorm.search.matcher import SearchConfig, SpaceMatcher, build_strategy
    from termnorm.search.strategies import SearchMode

    check_mode(mode)
    if strategy is None and not synonyms:
        search_mode = SearchMode(mode)
        matcher = SpaceMatcher(
            space, SearchConfig(search_mode.strategy), name=search_mode.matcher_name
        )
    else:
        if mode != SearchMode.TERM.value:
            raise typer.BadParameter("--mode concept and --strategy exclude each other; use o-c")
        if synonyms:
            space = _add_synonyms(space, synonyms, synonyms_format)
        matcher = build_strategy(
            space, strategy or default_strategy(synonyms is not None), threshold
        )
    return matcher.configure(
        max_chars=max_chars,
        min_score=min_score,
        namespaces=namespaces or None,
        semantic_types=semantic_types or None,
    )


def _add_synonyms(
    space: SearchSpace, synonyms: Sequence[Path], synonyms_format: str | None
) -> SearchSpace:
    """``space`` plus every file's synonyms, one stderr line per file."""
    from termnorm.search.domain import add_synonym_sources

    space, reports = add_synonym_sources(space, list(synonyms), synonyms_format)
    for name, report in reports:
        dropped = ", ".join(f"{n} {why}" for why, n in sorted(report.dropped.items()))
        typer.echo(
            f"domain synonyms from {name}: {report.kept} added ({report.encoded_texts} "
            f"texts encoded)" + (f"; dropped: {dropped}" if dropped else ""),
            err=True,
        )
    return space
