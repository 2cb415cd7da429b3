"""``--loss distill``: multilingual knowledge distillation onto a frozen teacher's vectors of
the English names (Reimers & Gurevych 2020), optionally with the MS loss v1 / v3 on the KG
sampler's batches of the same KG (``--distill-with``; :mod:`termnorm.training.distill`): its
settings (the teacher, the parallel pairs per batch, the loss it is combined with) and its
entry."""

# opt() returns a dataclasses.Field, as field() does: no shared mutable default
# ruff: noqa: RUF009

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import ClassVar

from termnorm.training.config.base import Section, opt
from termnorm.training.config.sampler import KGSamplerConfig
from termnorm.training.config.shared import LossKind, SharedConfig
from termnorm.training.objectives.base import objective

__all__ = ["ENTRY", "DistillConfig", "DistillWith"]


class DistillWith(StrEnum):
    """The loss ``--loss distill`` adds on the KG sampler's batches of the same KG."""

    NONE = "none"  # distillation alone
    MS = "ms"  # + the MS loss v1 (synonym groups)
    MS_V3 = "ms-v3"  # + the MS loss v3, margins from --kge


@dataclass
class DistillConfig(Section):
    """``--loss distill``: ``loss = w · L_distill [+ L_MS]`` (:mod:`termnorm.training.distill`)."""

    name: ClassVar[str] = "distill"

    teacher: Path | None = opt(
        None,
        "--loss distill: the frozen teacher model folder (default: the model --base-model was "
        "extended from by 'encoder extend-vocab', else --base-model itself, else the built-in "
        "all-MiniLM-L6-v2). Its vectors of the English names are computed once and cached.",
        exists="dir",
    )
    distill_pairs: int | None = opt(
        None,
        "--loss distill: parallel (English name, translation) pairs per micro-batch "
        "(default: --k, so 2k texts as every objective's batch).",
        min=1,
    )
    distill_weight: float = opt(
        1.0, "--loss distill: weight w of the distillation loss (beside --distill-with).", min=0
    )
    distill_with: DistillWith = opt(
        DistillWith.NONE,
        "--loss distill: also train a knowledge-infused loss on the KG sampler's batches of "
        "the same KG: none, ms (MS v1) or ms-v3 (MS v3, needs --kge).",
    )

    def validate(self, run: SharedConfig) -> None:
        """The bounds; for ``--loss distill``: ``--kge`` exactly with ``--distill-with ms-v3``
        (``--batches prototype`` is refused by its own section)."""
        self.check_bounds()
        if run.loss != LossKind.DISTILL:
            return
        if self.distill_with is DistillWith.MS_V3 and run.kge is None:
            raise ValueError(
                "--distill-with ms-v3 needs --kge KGE, a folder written by 'termnorm kge train "
                "--kg KG' on the same KG as --kg"
            )
        if self.distill_with is not DistillWith.MS_V3 and run.kge is not None:
            raise ValueError(
                "--loss distill reads --kge only with --distill-with ms-v3; drop --kge or pass "
                "--distill-with ms-v3"
            )


ENTRY = objective(
    LossKind.DISTILL,
    "termnorm.training.distill:distill_trainer",
    DistillConfig,
    DistillConfig,
    KGSamplerConfig,
    reads=("kge",),
    help="multilingual knowledge distillation onto a frozen teacher's English vectors",
)
