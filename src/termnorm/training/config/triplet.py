"""Settings of the triplet network (:mod:`termnorm.training.triplet`): the Train:OD mix and
the texts per group (the batch holds the shared ``2k`` texts)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from termnorm.training.config.base import Section, opt

__all__ = ["TripletConfig"]


@dataclass
class TripletConfig(Section):
    """``--loss triplet``: P × K text batches of Train:O or Train:OD."""

    name: ClassVar[str] = "triplet"

    od_ratio: float = opt(
        1 / 3, "--train-data od, --loss triplet: |D|/|O| after repeating the mentions."
    )
    texts_per_concept: int = opt(2, "--loss triplet: texts per group, anchor + K-1 positives.")
