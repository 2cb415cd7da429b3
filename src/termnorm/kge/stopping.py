"""Early stopping of a KGE run on the validation split (PyKEEN's ``EarlyStopper``).

Every ``eval_every`` epochs the model ranks a seeded sample of ``valid_max_triples``
validation triples (both sides, filtered against the training triples, realistic ranks); when
the MRR has not improved by 1 % (relative) for ``patience`` evaluations, training stops and
the weights of the best evaluation are restored before the test evaluation. A run that reaches
``epochs`` without stopping keeps its last weights (the test metrics are those of the saved
weights in both cases). The best weights are checkpointed in a private temporary folder.
"""

from __future__ import annotations

import logging
import tempfile
from pathlib import Path
from typing import Any

from termnorm.kge.config import KGEConfig
from termnorm.kge.split import TripleSplit, sample_triples

__all__ = ["RELATIVE_DELTA", "EarlyStopping"]

logger = logging.getLogger(__name__)

RELATIVE_DELTA = 0.01
"""Smallest relative gain of the validation MRR that counts as an improvement."""


class EarlyStopping:
    """The stopper arguments of one ``pipeline`` call and the card entry describing the run.

    Use as a context manager around the call (it owns the checkpoint folder)::

        with EarlyStopping(config, split) as stopping:
            result = pipeline(..., validation=stopping.validation, **stopping.pipeline_arguments())
            card["early_stopping"] = stopping.finish(result)
    """

    def __init__(self, config: KGEConfig, split: TripleSplit) -> None:
        self.config = config
        self.validation = sample_triples(split.valid, config.valid_max_triples, config.seed)
        self._folder: tempfile.TemporaryDirectory[str] | None = None

    def __enter__(self) -> EarlyStopping:
        self._folder = tempfile.TemporaryDirectory(prefix="termnorm-kge-")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._folder is not None:
            self._folder.cleanup()
            self._folder = None

    def pipeline_arguments(self) -> dict[str, Any]:
        """``validation``, ``stopper`` and ``stopper_kwargs`` for PyKEEN's ``pipeline``."""
        if not self.config.early_stopping:
            return {"validation": self.validation, "stopper": None}
        if self._folder is None:
            raise RuntimeError("EarlyStopping.pipeline_arguments outside its 'with' block")

        def report(_stopper: Any, mrr: float, epoch: int) -> None:
            logger.info("epoch %d: validation MRR %.4f", epoch, mrr)

        return {
            "validation": self.validation,
            "stopper": "early",
            "stopper_kwargs": {
                "frequency": self.config.eval_every,
                "patience": self.config.patience,
                "metric": "inverse_harmonic_mean_rank",
                "relative_delta": RELATIVE_DELTA,
                "evaluation_batch_size": self.config.eval_batch_size,
                "best_model_path": Path(self._folder.name) / "best.pt",
                "result_callbacks": [report],
            },
        }

    def finish(self, result: Any) -> dict[str, Any]:
        """The card entry: settings, the validation MRR of each evaluation, the best epoch,
        whether training stopped early and how many epochs ran."""
        epochs_run = len(result.losses)
        entry: dict[str, Any] = {"enabled": self.config.early_stopping, "epochs_run": epochs_run}
        if not self.config.early_stopping:
            return entry
        stopper = result.stopper
        every = self.config.eval_every
        return entry | {
            "metric": "validation MRR (both sides, realistic, filtered against training)",
            "valid_triples_ranked": int(self.validation.num_triples),
            "every": every,
            "patience": self.config.patience,
            "relative_delta": RELATIVE_DELTA,
            "evaluations": [
                {"epoch": every * (i + 1), "mrr": float(v)} for i, v in enumerate(stopper.results)
            ],
            "best_epoch": stopper.best_epoch,
            "stopped_early": bool(stopper.stopped),
            "kept_weights": "best evaluation" if stopper.stopped else "last epoch",
        }
