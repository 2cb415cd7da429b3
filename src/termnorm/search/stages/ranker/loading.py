"""Rankers and implication heads loaded once: cached per folder and card version."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from termnorm.search.domain import SearchSpace
    from termnorm.search.spec import PipelineSpec
    from termnorm.search.stages.ranker.ranker import Ranker

__all__ = [
    "clear_caches",
    "implication_of",
    "load_ranker",
    "min_score_is_probability",
    "rank_mode",
]

_lock = threading.RLock()
_rankers: dict[tuple[str, float, int | None], Ranker] = {}
_implications: dict[tuple[Any, Path | None], Any] = {}


def clear_caches() -> None:
    """Forget every loaded ranker and implication head."""
    with _lock:
        _rankers.clear()
        _implications.clear()


def load_ranker(path: str | Path, threads: int | None = None) -> Ranker:
    """Read a ranker folder (``termnorm rank train``), cached until its card changes; it
    scores on ``threads`` torch threads, the process's setting restored after each call."""
    from termnorm.search.stages.ranker.ranker import CARD_NAME
    from termnorm.search.stages.ranker.ranker import load_ranker as load

    folder = Path(path).resolve()
    card = folder / CARD_NAME
    key = (str(folder), card.stat().st_mtime if card.is_file() else 0.0, threads)
    with _lock:
        if key not in _rankers:
            _rankers[key] = load(folder, threads=threads)
        return _rankers[key]


def rank_mode(spec: PipelineSpec, ranker: Ranker | None) -> str | None:
    """The ranker's mode: the spec's, else ``learned`` when its folder carries a combiner."""
    if ranker is None or spec.rank_mode is not None:
        return spec.rank_mode
    return "learned" if ranker.combiner is not None else "fused"


def min_score_is_probability(spec: PipelineSpec, ranker: Ranker | None) -> bool:
    """Whether ``spec.min_score`` is a probability (a combiner card, or the learned rank
    mode) rather than the recall's cosine."""
    return spec.combiner is not None or rank_mode(spec, ranker) == "learned"


def implication_of(spec: PipelineSpec, space: SearchSpace) -> Any:
    """The implication predictor of ``--multi`` (cached per index and ``implication``):
    :func:`~termnorm.search.stages.ranker.implication.index_implication`."""
    from termnorm.search.stages.ranker.implication import index_implication

    key = (space.index.card.get("model", {}).get("path"), spec.implication)
    with _lock:
        if key not in _implications:
            _implications[key] = index_implication(space.index, spec.implication)
        return _implications[key]
