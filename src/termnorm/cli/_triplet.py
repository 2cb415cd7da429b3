"""``termnorm train --loss triplet``: the trainer factory the ``train`` command uses for it.

Reads the ``--mentions`` files of a Train:OD run (any format ``termnorm eval`` reads) here, in
the CLI layer, and hands ``(text, gold_ids)`` pairs to
:class:`~termnorm.training.triplet.TripletTrainer`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from termnorm.training.config import TrainConfig
from termnorm.training.trainer import Trainer

__all__ = ["triplet_trainer_factory"]


def triplet_trainer_factory(config: TrainConfig) -> Callable[..., Trainer]:
    """``(config, kg=, evaluator=, dist_info=) -> TripletTrainer`` with the mentions read."""
    from termnorm.cli._train_data import read_train_mentions
    from termnorm.training.triplet import TripletTrainer

    pairs = read_train_mentions(config)

    def make(cfg: TrainConfig, **kwargs: Any) -> Trainer:
        return TripletTrainer(cfg, mentions=pairs or None, **kwargs)

    return make
