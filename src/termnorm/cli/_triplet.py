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
    from termnorm.evaluation.synonyms import read_synonyms
    from termnorm.training.triplet import TripletTrainer
    from termnorm.training.triplet_data import TrainData

    train_data = TrainData(config.train_data)
    if train_data is TrainData.O and config.mentions:
        raise ValueError("--mentions is for --train-data od; drop it or pass --train-data od")
    pairs = [p for path in config.mentions for p in read_synonyms(path, config.mentions_format)]

    def make(cfg: TrainConfig, **kwargs: Any) -> Trainer:
        return TripletTrainer(cfg, mentions=pairs or None, **kwargs)

    return make
