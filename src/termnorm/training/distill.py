"""Multilingual knowledge distillation, composed (Reimers & Gurevych 2020): a frozen teacher's
vectors of the English names, parallel batches of the multilingual KG, and optionally the MS
loss on the KG sampler's batches of the same KG.

Each step's batch holds the KG sampler's 2k terms (``--distill-with ms`` / ``ms-v3``; none
otherwise) followed by a :class:`~termnorm.training.parallel.ParallelBatch` of P pivots and
their P translations; the trainer encodes them all in one pass, and
:class:`DistillObjective` splits the vectors::

    loss = w · (L_distill(s(en_1..en_P), t(en)) + L_distill(s(tr_1..tr_P), t(en)))
         + L_MS(e_1..e_2k; concepts)                             (ms: v1; ms-v3: KGE margins)

``distill_en`` and ``distill_tr`` are logged apart: the first says how far English drifts
from the teacher, the second how close the translations have come. The teacher never
trains: its vectors are a non-persistent buffer (:mod:`termnorm.training.teacher`), rebuilt
from the cache on resume.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from termnorm.encoders import TermEncoder
from termnorm.errors import ArtifactMismatchError
from termnorm.kg import KnowledgeGraph
from termnorm.losses import DistillationLoss
from termnorm.training.coder import CoderObjective, coder_sampler
from termnorm.training.composition import Job, Parts, composition
from termnorm.training.config import TrainConfig
from termnorm.training.data import with_domain_terms
from termnorm.training.kge_margin import kge_margin_objective, load_margin_kge
from termnorm.training.model_card import OBJECTIVE_CARD_FILE
from termnorm.training.objectives.distill import DistillWith
from termnorm.training.parallel import ParallelBatch, ParallelSampler, parallel_names
from termnorm.training.protocols import BatchSource, Encode, Objective
from termnorm.training.sampler import Batch, KGSampler
from termnorm.training.teacher import resolve_teacher, teacher_vectors

__all__ = ["DistillBatch", "DistillObjective", "DistillSource", "distill_parts", "distill_trainer"]

logger = logging.getLogger(__name__)


@dataclass
class DistillBatch:
    """The KG sampler's batch (or none) followed by a parallel batch, as one text list."""

    kg: Batch | None
    parallel: ParallelBatch

    @property
    def terms(self) -> list[str]:
        """The KG batch's terms, then the parallel batch's."""
        return [*(self.kg.terms if self.kg is not None else []), *self.parallel.terms]


class DistillSource:
    """Batch source: the parallel sampler, preceded by the KG sampler when one is given.

    Both are counter-based on ``(step, shard)``; the KG sampler's hard-negative refreshes
    (:meth:`before_step`) run as in its own objectives.
    """

    def __init__(self, parallel: ParallelSampler, kg: KGSampler | None = None) -> None:
        self.parallel, self.kg = parallel, kg

    def batch(self, step: int, shard: int = 0) -> DistillBatch:
        """The batch of ``(step, shard)``."""
        kg = self.kg.batch(step, shard) if self.kg is not None else None
        return DistillBatch(kg, self.parallel.batch(step, shard))

    def before_step(self, step: int, encode: Encode) -> None:
        """The KG sampler's refresh of its neighbours, when it has one."""
        if self.kg is not None:
            self.kg.before_step(step, encode)

    def state_dict(self) -> dict[str, Any]:
        """Both samplers' states."""
        kg = self.kg.state_dict() if self.kg is not None else None
        return {"parallel": self.parallel.state_dict(), "kg": kg}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore :meth:`state_dict`."""
        self.parallel.load_state_dict(state["parallel"])
        if self.kg is not None:
            self.kg.load_state_dict(state["kg"])

    def stats(self) -> dict[str, int]:
        """The parallel names' counts, and the KG sampler's (``sampler_`` prefixed)."""
        out = self.parallel.stats()
        if self.kg is not None:
            out.update({f"sampler_{k}": v for k, v in self.kg.stats().items()})
        return out


class DistillObjective(Objective):
    """``w · L_distill`` over a :class:`DistillBatch`'s parallel texts, plus ``inner``'s loss
    over its KG texts (module doc).

    Args:
        teacher: the teacher's vectors of the pivots ``[C, d]`` (rows = ``teacher_rows``).
        weight: w.
        inner: the knowledge-infused objective on the KG batch (None: distillation alone).
        record: what :meth:`save` writes to ``objective.json`` (teacher, pairs, ...).
    """

    teacher: torch.Tensor  # [C, d]

    def __init__(
        self,
        teacher: np.ndarray,
        weight: float = 1.0,
        inner: Objective | None = None,
        record: dict[str, Any] | None = None,
    ) -> None:
        super().__init__()
        # not persistent: rebuilt from the teacher (cache) on resume, never in checkpoints
        self.register_buffer("teacher", torch.from_numpy(np.asarray(teacher)), persistent=False)
        self.loss = DistillationLoss()
        self.weight = weight
        self.inner = inner
        self.record = dict(record or {})

    def forward(self, embeddings: torch.Tensor, batch: DistillBatch) -> dict[str, torch.Tensor]:
        """Loss parts ``{"loss", "distill", "distill_en", "distill_tr"}`` (plus the inner
        objective's, e.g. ``"ms"``) of float32 vectors ``[2k + 2P, d]`` (float32, no
        autocast)."""
        with torch.autocast(device_type=embeddings.device.type, enabled=False):
            emb = embeddings.float()
            n_kg = len(emb) - len(batch.parallel.terms)
            p = batch.parallel.pairs
            target = self.teacher[batch.parallel.teacher_rows.to(emb.device)]  # [2P, d]
            student = emb[n_kg:]  # [2P, d]: pivots, then translations
            parts = {
                "distill_en": self.loss(student[:p], target[:p]),
                "distill_tr": self.loss(student[p:], target[p:]),
            }
            parts["distill"] = parts["distill_en"] + parts["distill_tr"]
            total = self.weight * parts["distill"]
            if self.inner is not None and batch.kg is not None:
                inner = self.inner(emb[:n_kg], batch.kg)
                total = total + inner.pop("loss")
                parts.update(inner)
            parts["loss"] = total
        return parts

    def save(self, folder: Path) -> None:
        """Write ``objective.json``: the teacher and the pairs (beside the inner objective's
        own record, which it merges into)."""
        path = Path(folder) / OBJECTIVE_CARD_FILE
        inner: dict[str, Any] = {}
        if self.inner is not None:
            self.inner.save(folder)
            if path.is_file():
                inner = {f"with_{k}": v for k, v in json.loads(path.read_text()).items()}
        record = {"loss": "distill", **self.record, "distill_weight": self.weight, **inner}
        path.write_text(json.dumps(record, indent=2, default=str) + "\n")


def _inner(
    config: TrainConfig, kg: KnowledgeGraph, dim: int
) -> tuple[KGSampler | None, Objective | None]:
    """The KG sampler and the MS objective of ``--distill-with`` (none: ``(None, None)``)."""
    with_ = config.distill.distill_with
    if with_ is DistillWith.NONE:
        return None, None
    ms = config.replace(loss="ms", kge=None, distill_with="none")
    sampler = coder_sampler(ms, kg)
    if with_ is DistillWith.MS:
        return sampler, CoderObjective(dim, ms, [], 0)
    kge = load_margin_kge(config, kg)
    return sampler, kge_margin_objective(config, kge, sampler.concept_ids)


def load_teacher(config: TrainConfig, device: torch.device) -> TermEncoder:
    """The frozen teacher (:func:`~termnorm.training.teacher.resolve_teacher`), on ``device``
    with the run's pooling and max length, its weights never trained."""
    path = resolve_teacher(config.distill.teacher, config.base_model)
    teacher = TermEncoder.load(path, config.pooling, config.max_length, device)
    teacher.model.requires_grad_(False)
    return teacher


def distill_parts(job: Job) -> Parts:
    """The parts of ``--loss distill`` (module doc).

    ``mentions`` (``--train-data od``) join the KG sampler's terms of ``--distill-with``; the
    parallel pairs come from the KG's own names.

    Raises:
        ValueError: a KG without parallel names (:func:`~termnorm.training.parallel.parallel_names`).
        termnorm.errors.ArtifactMismatchError: a teacher of another dimension than the student,
            or a KGE trained on another KG (``--distill-with ms-v3``).
    """
    config, kg = job.config, job.kg
    config.validate()
    names = parallel_names(kg)  # data first: its errors come before the models
    sampler_kg = with_domain_terms(config, kg, job.mentions)
    encoder, info = job.encoder()  # seeds torch
    dim = int(encoder.model.config.hidden_size)
    teacher = load_teacher(config, info.device)
    if int(teacher.model.config.hidden_size) != dim:
        raise ArtifactMismatchError(
            f"the teacher {teacher.path} has vectors of {teacher.model.config.hidden_size} "
            f"dimensions, the student {config.base_model or 'default'} {dim}: the student "
            f"learns the teacher's vectors, so pass a --teacher of {dim} dimensions (or the "
            "model the student was made from)"
        )
    vectors = teacher_vectors(teacher, names.pivots, config.encode_batch)
    record = {
        "teacher": str(teacher.path),
        "teacher_fingerprint": teacher.fingerprint,
        "distill_pairs": config.distill.distill_pairs or config.k,
        "distill_with": config.distill.distill_with.value,
        **names.counts(),
    }
    del teacher
    pairs = ParallelSampler(
        names, config.distill.distill_pairs or config.k, config.seed, config.sampler.lang_balanced
    )
    kg_sampler, inner = _inner(config, sampler_kg, dim)
    objective = DistillObjective(vectors, config.distill.distill_weight, inner, record)
    logger.info(
        "distillation: %d concepts with an English name, %d translations; teacher %s",
        len(names.concept_ids),
        len(names.texts),
        record["teacher"],
    )
    source: BatchSource = DistillSource(pairs, kg_sampler)
    return Parts(source, objective, sampler_kg)


distill_trainer = composition(distill_parts)
