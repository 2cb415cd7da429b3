"""One composition for every objective: a :class:`~termnorm.training.Trainer` from the parts
an objective builds.

An objective's *parts function* ``(job: Job) -> Parts`` reads its data and builds its batch
source and its objective, loading the base encoder with :meth:`Job.encoder` when it needs it
(after its data: data errors come before the model). :func:`composition` makes it the
composition function ``(config, kg, mentions, evaluator, dist_info) -> Trainer`` that the
objectives' registry names (:data:`termnorm.training.objectives.OBJECTIVES`).
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
    """What an objective's parts are built from: the run's config, its KG, the ``(text,
    gold_ids)`` mentions of ``--train-data od`` and the process's DDP place (``None``: from
    torchrun's environment)."""

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
    """An objective's batch source and objective, and the KG the model card describes
    (``None``: the job's)."""

    source: BatchSource
    objective: Objective
    kg: KnowledgeGraph | None = None


def composition(parts: Callable[[Job], Parts]) -> Composition:
    """The composition function of the objective whose parts ``parts`` builds (its
    docstring): a :class:`Trainer` of the config, the base encoder and the parts."""

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
        card_kg = kg if built.kg is None else built.kg
        source, objective = built.source, built.objective
        return Trainer(
            config, encoder, source, objective, kg=card_kg, evaluator=evaluator, dist_info=info
        )

    compose.__doc__ = parts.__doc__
    return compose
