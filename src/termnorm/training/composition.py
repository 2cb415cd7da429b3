"""One composition for every objective: a :class:`~termnorm.training.Trainer` from the parts
an objective's *parts function* ``(job: Job) -> Parts`` builds (its batch source and objective,
its data read before it loads the base encoder with :meth:`Job.encoder`, so that data errors
come before the model); :func:`composition` makes it the composition function that
:data:`termnorm.training.objectives.OBJECTIVES` names.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from termnorm.encoders import TermEncoder
from termnorm.kg import KnowledgeGraph
from termnorm.training.config import TrainConfig
from termnorm.training.data import MentionPair
from termnorm.training.distributed import DistInfo
from termnorm.training.model import load_base_encoder
from termnorm.training.protocols import BatchSource, Evaluator, Objective
from termnorm.training.trainer import Trainer

__all__ = ["Composition", "Job", "Parts", "composition"]

Composition = Callable[
    [TrainConfig, KnowledgeGraph, Sequence[MentionPair], Evaluator | None, DistInfo | None],
    Trainer,
]


@dataclass
class Job:
    """An objective's inputs: the config, the KG, the ``(text, gold_ids)`` mentions of
    ``--train-data od`` and the process's DDP place (``None``: from torchrun's environment)."""

    config: TrainConfig
    kg: KnowledgeGraph
    mentions: Sequence[MentionPair]
    dist_info: DistInfo | None
    _loaded: tuple[TermEncoder, DistInfo] | None = field(default=None, init=False, repr=False)

    def encoder(self) -> tuple[TermEncoder, DistInfo]:
        """The base encoder on this process's device and its place in the job, loaded once
        (loading seeds torch, so heads built after it start alike on every rank)."""
        if self._loaded is None:
            self._loaded = load_base_encoder(self.config, self.dist_info)
        return self._loaded


@dataclass(frozen=True)
class Parts:
    """The batch source, the objective and the KG the model card describes (``None``: the job's)."""

    source: BatchSource
    objective: Objective
    kg: KnowledgeGraph | None = None


def composition(parts: Callable[[Job], Parts]) -> Composition:
    """``(config, kg, mentions, evaluator, dist_info) -> Trainer`` of ``parts`` (its docstring)."""

    def compose(
        config: TrainConfig,
        kg: KnowledgeGraph,
        mentions: Sequence[MentionPair] = (),
        evaluator: Evaluator | None = None,
        dist_info: DistInfo | None = None,
    ) -> Trainer:
        job = Job(config, kg, mentions, dist_info)
        built = parts(job)
        encoder, info = job.encoder()
        card_kg, source, objective = built.kg or kg, built.source, built.objective
        return Trainer(
            config, encoder, source, objective, kg=card_kg, evaluator=evaluator, dist_info=info
        )

    compose.__doc__ = parts.__doc__
    return compose
