"""The parts a :class:`~termnorm.training.Trainer` is composed of, and how new ones plug in.

A run is ``Trainer(config, encoder, source, objective, kg=..., evaluator=...)``:

* a **batch source** (:class:`BatchSource`) yields the batch of ``(step, shard)``: the texts
  the trainer encodes (``batch.terms``) plus whatever the objective needs (labels, relation
  slots, ...). It is counter-based — the batch depends only on its seed, ``(step, shard)``
  and its :meth:`~BatchSource.state_dict` — so a resumed run, DDP ranks and accumulation
  micro-batches (``shard = rank · grad_accum + micro``) reproduce one stream;
* an **objective** (:class:`Objective`) is an ``nn.Module`` from the batch's float32 term
  vectors ``[N, d]`` (the encoder's pooled, un-normalised output, in ``batch.terms`` order) and
  the batch to the loss parts ``{"loss": total, "<part>": ...}``; its own parameters are heads
  (trained with ``relation_lr``), saved beside the encoder by :meth:`Objective.save`;
* an optional **evaluator** (:class:`Evaluator`): ``encoder -> {metric: value}`` with a
  ``primary_metric``, the metric by which the best model is kept.

The trainer owns everything else: optimizer and schedule, precision, freezing, DDP,
checkpoints and resume, signals, the log, the model card. Each objective's parts function
``(job) -> Parts`` builds its batch source and objective in its own module (``coder``,
``kge_margin``, ``triplet``, ``mtcg``, ``kge_injection``, ``distill``; ``prototype`` for the
prototype batches), and :func:`termnorm.training.composition.composition` makes it the
composition function ``(config, kg, mentions, evaluator, dist_info) -> Trainer`` that
:func:`termnorm.training.run.build_trainer` picks by ``config.loss``.

A new method is a new module with its batch source, its objective and its parts function, plus
a module in :mod:`termnorm.training.objectives` holding its settings
(:class:`~termnorm.training.config.base.Section`: its flags follow) and its entry, and one line
in that package's registry — never an edit of the trainer.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import torch
from torch import nn

if TYPE_CHECKING:
    from termnorm.encoders import TermEncoder

__all__ = ["BatchSource", "Encode", "Evaluator", "Objective", "TokenObjective", "TrainBatch"]

Encode = Callable[[list[str]], np.ndarray]
"""Texts -> vectors ``[n, d]`` with the current weights (the trainer's precision, no grad)."""


class TrainBatch(Protocol):
    """What the trainer reads from a batch: the texts to encode, in order.

    A batch may also carry ``tokens`` (``input_ids``, ``attention_mask``, ... tensors
    ``[N, T]``): the trainer then feeds those instead of tokenizing ``terms`` (a source that
    masks tokens or tracks token spans, e.g. KGE injection's passages).
    """

    @property
    def terms(self) -> Sequence[str]:
        """The texts of the batch (the objective's embeddings follow this order)."""
        ...


class BatchSource(Protocol):
    """Counter-based batches for one run (see module doc)."""

    def batch(self, step: int, shard: int = 0) -> Any:
        """The batch of micro-batch ``shard`` of ``step`` (a :class:`TrainBatch`)."""
        ...

    def before_step(self, step: int, encode: Encode) -> None:
        """Called on every rank before ``step``; a source whose batches follow the model
        (hard negatives) re-embeds with ``encode`` here, the others do nothing."""
        ...

    def state_dict(self) -> dict[str, Any]:
        """What a checkpoint needs to continue the stream."""
        ...

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore :meth:`state_dict`."""
        ...

    def stats(self) -> dict[str, int]:
        """Counts for the model card (``sampled <name>`` rows)."""
        ...


class Evaluator(Protocol):
    """``encoder -> metrics``, with the name of the metric the best model is kept by."""

    @property
    def primary_metric(self) -> str:
        """A key of the returned metrics; higher is better."""
        ...

    def __call__(self, encoder: TermEncoder) -> dict[str, float]:
        """Metrics of the encoder's current weights."""
        ...


class Objective(nn.Module, ABC):
    """Base of the objectives: ``forward(embeddings [N, d] float32, batch) -> loss parts``.

    Subclasses implement :meth:`forward` (returning ``"loss"``, the total to minimise, and its
    named parts); their parameters are heads the optimizer trains with ``relation_lr``.
    """

    @property
    def needs_first_batch(self) -> bool:
        """True while a setting waits to be measured on the first batch (TransE-MS's λ_rel):
        the trainer then runs one forward pass on batch ``(0, 0)`` without gradients before
        step 0, alike on every rank."""
        return False

    @property
    def needs_cls(self) -> bool:
        """True when :meth:`forward` also takes ``cls``, the transformer's first-token
        vectors ``[N, H]`` (float32, in ``batch.terms`` order) beside the pooled ones — the
        MTCG's implication-number head reads the mention's [CLS] vector."""
        return False

    @abstractmethod
    def forward(self, embeddings: torch.Tensor, batch: Any) -> dict[str, torch.Tensor]:
        """The loss parts of one batch (``"loss"`` included)."""

    def save(self, folder: Path) -> None:
        """Write the heads a user of the model needs beside the encoder (default: none)."""


class TokenObjective(Objective):
    """An objective that needs the model's token states rather than pooled term vectors
    (masked-LM, injection into a middle layer): the trainer calls :meth:`forward_tokens`
    with the transformer and the batch's tokens instead of pooling and calling ``forward``.
    """

    @abstractmethod
    def forward_tokens(
        self, model: nn.Module, tokens: dict[str, torch.Tensor], batch: Any
    ) -> dict[str, torch.Tensor]:
        """The loss parts of one batch (``"loss"`` included), running ``model`` itself."""

    def forward(self, embeddings: torch.Tensor, batch: Any) -> dict[str, torch.Tensor]:
        """Refused: this objective scores token states (:meth:`forward_tokens`)."""
        raise TypeError(
            f"{type(self).__name__} scores token states, not pooled vectors: the trainer "
            "calls forward_tokens(model, tokens, batch)"
        )
