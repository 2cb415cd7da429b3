"""MS loss v3 training, composed: CODER's KG sampler as batch source, KGE margins as objective.

:class:`KGEMarginObjective` gives each pair (i, j) of the batch's 2k synonym-group terms the
margins of formula 3 (:class:`~termnorm.losses.MultiSimilarityV3Loss`) from the KGE cosine
similarity of the two terms' concepts (batch labels → the sampler's concept IDs → entity
vectors)::

    loss = ms = L_MS-v3(e_1..e_2k; concepts; S^KGE)

A concept without an entity vector (it has no relation in the KG, so the KGE never saw it)
has no KGE similarity: every pair involving it falls back to the MS loss v1 margin
λ = 0.5 on both sides. The build logs how many of the sampler's concepts lack a vector, and
the objective counts the pairs of each kind; :meth:`KGEMarginObjective.save` writes those
counts, the KGE folder and its model into ``objective.json`` beside the encoder (the model
card shows them).

:func:`kge_margin_trainer` loads the KGE once (refusing one trained on another KG) and
composes the :class:`~termnorm.training.Trainer`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from termnorm.kg import KnowledgeGraph
from termnorm.kge import KGEVectors, load_kge
from termnorm.losses import MultiSimilarityV3Loss, kge_margins, label_pairs
from termnorm.training.coder import coder_sampler
from termnorm.training.composition import Job, Parts, composition
from termnorm.training.config import TrainConfig
from termnorm.training.data import with_domain_terms
from termnorm.training.model_card import OBJECTIVE_CARD_FILE
from termnorm.training.protocols import Objective
from termnorm.training.sampler import Batch

__all__ = [
    "KGEMarginObjective",
    "kge_margin_objective",
    "kge_margin_parts",
    "kge_margin_trainer",
    "load_margin_kge",
]

logger = logging.getLogger(__name__)


class KGEMarginObjective(Objective):
    """The MS loss v3 over a :class:`Batch`, margins from the KGE similarity of its concepts.

    Args:
        concept_ids: the sampler's concept IDs (``batch.labels`` index them).
        kge: the entity vectors (concepts absent from it fall back to ``loss.lam``).
        loss: the MS v3 loss (α, β, ε, fallback λ).
        source: what to record about the KGE in :meth:`save` (folder, model, ...).
    """

    unit: torch.Tensor  # [C, d] unit entity vectors, zero rows where unknown
    known: torch.Tensor  # [C] bool: the concept has an entity vector

    def __init__(
        self,
        concept_ids: Sequence[str],
        kge: KGEVectors,
        loss: MultiSimilarityV3Loss | None = None,
        source: dict[str, Any] | None = None,
    ) -> None:
        super().__init__()
        self.loss = loss or MultiSimilarityV3Loss()
        unit, known = kge.unit_vectors(list(concept_ids))  # [C, d], [C]
        # not persistent: rebuilt from the KGE folder, never stored in checkpoints
        self.register_buffer("unit", torch.from_numpy(unit), persistent=False)
        self.register_buffer("known", torch.from_numpy(known), persistent=False)
        self.concepts_without_vector = int((~known).sum())
        self.source = dict(source or {})
        self.pairs = {"kge": 0, "fallback": 0}  # off-diagonal pairs seen, by margin kind

    def kge_similarity(self, labels: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(S^KGE [N, N], known [N, N])`` of concept labels ``[N]``; ``known`` is False for
        pairs with a concept that has no entity vector (their similarity is 0, unused)."""
        labels = labels.to(self.unit.device)
        u = self.unit[labels]  # [N, d]
        sim = (u @ u.T).clamp(-1.0, 1.0)  # [N, N]
        has = self.known[labels]  # [N]
        return sim, has.unsqueeze(1) & has.unsqueeze(0)

    def margins(self, embeddings: torch.Tensor, batch: Batch) -> tuple[torch.Tensor, torch.Tensor]:
        """``(λ_p, λ_n)`` [N, N] the loss uses for float32 vectors ``[N, d]`` of ``batch``."""
        sim, _, _ = label_pairs(embeddings, batch.labels)
        kge_sim, known = self.kge_similarity(batch.labels)
        return kge_margins(sim, kge_sim, known, self.loss.lam)

    def forward(self, embeddings: torch.Tensor, batch: Batch) -> dict[str, torch.Tensor]:
        """Loss parts ``{"loss", "ms"}`` of float32 vectors ``[2k, d]`` (float32, no autocast)."""
        with torch.autocast(device_type=embeddings.device.type, enabled=False):
            emb = embeddings.float()
            sim, pos_mask, neg_mask = label_pairs(emb, batch.labels)
            kge_sim, known = self.kge_similarity(batch.labels)
            n = len(batch.labels)
            n_known = int(known.sum()) - int(known.diagonal().sum())
            self.pairs["kge"] += n_known
            self.pairs["fallback"] += n * (n - 1) - n_known
            ms = self.loss.from_similarity(sim, pos_mask, neg_mask, kge_sim, known)
        return {"loss": ms, "ms": ms}

    def save(self, folder: Path) -> None:
        """Write ``objective.json``: the loss, the KGE, the fallback counts (logged too)."""
        total = self.pairs["kge"] + self.pairs["fallback"]
        logger.info(
            "MS v3: %d of %d pairs had KGE margins, %d fell back to lambda = %g (a concept "
            "without an entity vector)",
            self.pairs["kge"],
            total,
            self.pairs["fallback"],
            self.loss.lam,
        )
        record = {
            "loss": "ms-v3",
            **self.source,
            "fallback_margin": self.loss.lam,
            "concepts_without_kge_vector": self.concepts_without_vector,
            "pairs_with_kge_margin": self.pairs["kge"],
            "pairs_with_fallback_margin": self.pairs["fallback"],
        }
        (Path(folder) / OBJECTIVE_CARD_FILE).write_text(json.dumps(record, indent=2) + "\n")


def kge_margin_parts(job: Job) -> Parts:
    """The parts of ``--loss ms-v3``: the KG sampler (synonym groups) + MS v3.

    Raises: as :func:`load_margin_kge`.
    """
    config, kg = job.config, job.kg
    config.validate()
    kge = load_margin_kge(config, kg)  # the KG as given: the one the KGE must have been trained on
    kg = with_domain_terms(config, kg, job.mentions)  # mentions join known concepts only
    job.encoder()  # the model after the data, before the objective (seeds torch)
    sampler = coder_sampler(config, kg)
    objective = kge_margin_objective(config, kge, sampler.concept_ids)
    return Parts(sampler, objective, kg)


kge_margin_trainer = composition(kge_margin_parts)


def load_margin_kge(config: TrainConfig, kg: KnowledgeGraph) -> KGEVectors:
    """The KGE of ``config.kge``, refused unless it was trained on ``kg``.

    Raises:
        ValueError: no ``config.kge``.
        termnorm.errors.ArtifactMismatchError: the KGE was trained on another KG (the
            message names the KG it was trained on) or is not a KGE folder.
    """
    if config.kge is None:  # validate() refuses it already; keeps the type checker informed
        raise ValueError(
            f"--loss {config.loss} needs --kge KGE (a folder from 'termnorm kge train')"
        )
    return load_kge(config.kge, kg)


def kge_margin_objective(
    config: TrainConfig, kge: KGEVectors, concept_ids: Sequence[str]
) -> KGEMarginObjective:
    """The MS v3 objective over a batch source's ``concept_ids`` (batch labels index them),
    margins from ``kge`` (loaded from ``config.kge``); logs how many concepts lack a vector."""
    source = {
        "kge": str(config.kge),
        "kge_model": kge.card.get("config", {}).get("model"),
        "kge_dim": kge.dim,
        "kge_kg_fingerprint": kge.card.get("kg", {}).get("fingerprint"),
    }
    objective = KGEMarginObjective(concept_ids, kge, source=source)
    missing = objective.concepts_without_vector
    if missing:
        logger.warning(
            "MS v3: %d of %d concepts have no KGE vector (no relation in the KG); their pairs "
            "use the MS v1 margin lambda = %g",
            missing,
            len(concept_ids),
            objective.loss.lam,
        )
    logger.info("MS v3 margins from the %s KGE in %s", source["kge_model"], config.kge)
    return objective
