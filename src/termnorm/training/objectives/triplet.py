"""``--loss triplet``: the batch-hard soft-margin triplet network over Train:O or Train:OD
texts (:mod:`termnorm.training.triplet`): its settings, the Train:OD mix and the texts per
group (the batch holds the shared ``2k`` texts), and its entry."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from termnorm.training.config.base import Section, opt
from termnorm.training.config.shared import LossKind
from termnorm.training.objectives.base import objective

__all__ = ["ENTRY", "TripletConfig"]


@dataclass
class TripletConfig(Section):
    """``--loss triplet``: P × K text batches of Train:O or Train:OD."""

    name: ClassVar[str] = "triplet"

    od_ratio: float = opt(
        1 / 3, "--train-data od, --loss triplet: |D|/|O| after repeating the mentions."
    )
    texts_per_concept: int = opt(2, "--loss triplet: texts per group, anchor + K-1 positives.")


ENTRY = objective(
    LossKind.TRIPLET,
    "termnorm.training.triplet:triplet_trainer",
    TripletConfig,
    help="batch-hard soft-margin triplet network over Train:O or Train:OD texts",
)
