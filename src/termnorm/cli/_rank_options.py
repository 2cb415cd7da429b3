"""The ranker options shared by ``termnorm normalize`` and ``termnorm eval normalize``.

``--ranker RANKER`` wraps the command's matcher (the recall stage) in a
:class:`~termnorm.search.rank.RankedMatcher`; ``--k-c``, ``--rank-mode``, ``--fusion-weight``
and ``--theta`` configure it, ``--multi`` (with ``--implication``) adds multi-code output.
Help texts and defaults are read without importing torch, so registering stays cheap.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:  # pragma: no cover
    from termnorm.search.candidate import RowMatcher
    from termnorm.search.rank.matcher import RankedMatcher

__all__ = [
    "FUSION_WEIGHT_HELP",
    "IMPLICATION_HELP",
    "K_C_HELP",
    "MULTI_HELP",
    "RANKER_HELP",
    "RANK_MODES",
    "RANK_MODE_HELP",
    "THETA_HELP",
    "RankOptions",
    "ranked_matcher",
]

RANKER_HELP = (
    "Ranker folder (termnorm rank train): the top --k-c candidates of the search are "
    "reordered by the ranker fused with the recall score."
)
K_C_HELP = "Candidates recalled per mention for the ranker (at least -k)."
RANK_MODE_HELP = (
    "learned: by the probability of the combiner the ranker folder carries (the default when "
    "it has one: rank train --holdout); fused: by (1-w)*ranker + w*recall similarity (the "
    "paper's, w=0.5; the default otherwise); rank: by the ranker alone; recall: the search "
    "order (ablation)."
)
RANK_MODES = ("learned", "fused", "rank", "recall")
FUSION_WEIGHT_HELP = "w, the weight of the recall similarity in the fused score."
THETA_HELP = "With --multi and 3+ predicted codes: also output candidates with fused score > theta."
MULTI_HELP = (
    "Several codes per mention: the predicted implication number x picks the top x codes "
    "(x=3: the top 3 and every candidate above --theta). Needs an implication head: the "
    "index's recall model's, or --implication MODEL."
)
IMPLICATION_HELP = "Model folder with an implication head (termnorm train --objective mtcg)."

DEFAULT_K_C = 10
DEFAULT_WEIGHT = 0.5
DEFAULT_THETA = 0.8


@dataclass(frozen=True)
class RankOptions:
    """What ``--ranker`` and its companions asked for."""

    ranker: Path
    k_c: int = DEFAULT_K_C
    mode: str | None = None
    weight: float = DEFAULT_WEIGHT
    theta: float = DEFAULT_THETA
    multi: bool = False
    implication: Path | None = None
    min_probability: float | None = None

    @classmethod
    def of(
        cls,
        ranker: Path | None,
        k_c: int = DEFAULT_K_C,
        mode: str | None = None,
        weight: float = DEFAULT_WEIGHT,
        theta: float = DEFAULT_THETA,
        multi: bool = False,
        implication: Path | None = None,
        min_score: float | None = None,
    ) -> RankOptions | None:
        """The options, ``None`` without ``--ranker`` (refusing ranker-only flags then).
        In the learned mode ``min_score`` is the combiner's probability threshold."""
        if mode is not None and mode not in RANK_MODES:
            raise typer.BadParameter(f"--rank-mode must be one of {', '.join(RANK_MODES)}")
        if ranker is None:
            if multi or implication is not None:
                raise typer.BadParameter("--multi and --implication need --ranker RANKER")
            return None
        options = cls(ranker, k_c, mode, weight, theta, multi, implication)
        if options.learned and min_score is not None:
            return replace(options, min_probability=min_score)
        return options

    @property
    def resolved_mode(self) -> str:
        """The mode asked for, or the default (``learned`` when the ranker folder carries a
        combiner, else ``fused``), read from its card without loading the model."""
        if self.mode is not None:
            return self.mode
        card = self.ranker / "ranker.json"  # termnorm.search.rank.ranker.CARD_NAME (no torch)
        carries = card.is_file() and bool(json.loads(card.read_text()).get("combiner"))
        return "learned" if carries else "fused"

    @property
    def learned(self) -> bool:
        """Whether candidates are ordered by the combiner's probability."""
        return self.resolved_mode == "learned"

    def settings(self) -> dict[str, object]:
        """JSON-ready, for a resumable job's record (a changed ranker option is refused)."""
        return {
            "ranker": str(self.ranker.resolve()), "k_c": self.k_c, "mode": self.resolved_mode,
            "weight": self.weight, "theta": self.theta, "multi": self.multi,
            "implication": None if self.implication is None else str(self.implication.resolve()),
        }  # fmt: skip


def ranked_matcher(
    recall: RowMatcher, options: RankOptions, threads: int | None = None
) -> RankedMatcher:
    """``recall`` followed by the ranker of ``options`` (refused when the ranker was trained
    on another index; ``--multi`` resolves its implication predictor)."""
    from termnorm.search.rank.implication import resolve_implication
    from termnorm.search.rank.matcher import RankedMatcher
    from termnorm.search.rank.ranker import load_ranker

    implication = None
    if options.multi:
        index = getattr(recall, "index", None)
        model_path = index.card["model"].get("path") if index is not None else None
        implication = resolve_implication(
            Path(model_path) if model_path else None, options.implication
        )
    return RankedMatcher(
        recall,
        load_ranker(options.ranker, threads=threads),
        k_c=options.k_c,
        mode=options.resolved_mode,
        weight=options.weight,
        theta=options.theta,
        implication=implication,
        min_probability=options.min_probability,
    )
