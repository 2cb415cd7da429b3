"""Relation classification from head and tail embeddings (CODER's DDBRC, section 4.6, A.4).

    ŷ = softmax(W [e_h, e_t] + b)

trained with cross-entropy on a seeded 80% of the KG's (h, r, t) triplets; accuracy on the other
20% (``relation_accuracy``, primary). Two modes:

* ``feature``: the encoder is frozen; vectors are computed once (lr 1e-3, batch 512).
* ``fine-tune``: the encoder is trained with the classifier (lr 2e-5 for the encoder, 1e-3 for
  W and b, batch 96) on a *copy* of the model, so the caller's model is left untouched.

50 epochs by default (CODER). Only training triplets are ever seen by the optimiser; the split
is a pure function of (number of triplets, ``test_fraction``, ``seed``), see
:func:`~termnorm.evaluation.embedding.seeded_split`. W and b start at zero (the problem is
convex in feature mode, and a fixed start keeps runs reproducible).
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F
from torch import nn

from termnorm.errors import EmptyResultError
from termnorm.evaluation.embedding import (
    ConceptVector,
    Embedder,
    EmbeddingEvaluator,
    concept_vectors,
    seeded_split,
)
from termnorm.kg import KnowledgeGraph

__all__ = ["RelationClassificationEvaluator", "RelationMode", "RelationResult", "triplets_of"]

logger = logging.getLogger(__name__)

Features = Callable[[np.ndarray], torch.Tensor]
"""Triplet rows → ``[B, 2d]`` classifier inputs."""


class RelationMode(str, Enum):
    """Frozen features or a fine-tuned encoder."""

    FEATURE = "feature"
    FINE_TUNE = "fine-tune"


@dataclass
class RelationResult:
    """Test accuracy with the context needed to read it."""

    accuracy: float
    train_accuracy: float
    majority: float
    labels: int
    train: int
    test: int
    dropped: int

    def metrics(self) -> dict[str, float]:
        """Flat metrics without prefix (``majority`` = accuracy of always guessing the most
        frequent training label)."""
        return {
            "accuracy": self.accuracy,
            "train_accuracy": self.train_accuracy,
            "majority": self.majority,
            "labels": float(self.labels),
            "train": float(self.train),
            "test": float(self.test),
        }

    def to_dict(self) -> dict[str, object]:
        """JSON-ready details."""
        return {**self.metrics(), "dropped": self.dropped}


def triplets_of(kg: KnowledgeGraph) -> tuple[pd.DataFrame, int]:
    """Distinct (head, relation, tail) rows whose head and tail are concepts of the KG, and
    the number of rows dropped (dangling ends, self-loops, duplicates)."""
    known = set(kg.concepts["concept_id"])
    rel = kg.relations
    keep = rel["head"].isin(known) & rel["tail"].isin(known) & (rel["head"] != rel["tail"])
    out = rel[keep].drop_duplicates().sort_values(["head", "relation", "tail"])
    return out.reset_index(drop=True), len(rel) - len(out)


class RelationClassificationEvaluator(EmbeddingEvaluator):
    """DDBRC-style relation classification on a KG's triplets.

    Args:
        kg: concepts (their preferred names embed the ends) and relations (the labels).
        mode: ``feature`` (frozen encoder) or ``fine-tune``.
        epochs: passes over the training triplets (CODER: 50).
        lr: classifier learning rate (default 1e-3).
        encoder_lr: encoder learning rate in fine-tune mode (default 2e-5).
        batch_size: default 512 (feature) / 96 (fine-tune).
        test_fraction: share of triplets held out for the accuracy.
        max_triplets: seeded sample of at most this many triplets before the split.
        max_per_label: seeded sample of at most this many triplets per relation label (to
            balance a KG dominated by one label; applied before ``max_triplets``).
        vectors: ``name`` or ``mean`` concept vectors (feature mode).
        seed: seed of the sample, the split and the batch order.
        name: metric prefix.
    """

    primary = "accuracy"  # on the held-out triplets

    def __init__(
        self,
        kg: KnowledgeGraph,
        mode: RelationMode | str = RelationMode.FEATURE,
        epochs: int = 50,
        lr: float = 1e-3,
        encoder_lr: float = 2e-5,
        batch_size: int | None = None,
        test_fraction: float = 0.2,
        max_triplets: int | None = None,
        max_per_label: int | None = None,
        vectors: ConceptVector | str = ConceptVector.NAME,
        seed: int = 0,
        name: str = "relation",
    ) -> None:
        self.kg = kg
        self.mode = RelationMode(mode)
        self.epochs = epochs
        self.lr = lr
        self.encoder_lr = encoder_lr
        self.batch_size = batch_size or (512 if self.mode is RelationMode.FEATURE else 96)
        self.vectors = ConceptVector(vectors)
        self.seed = seed
        self.name = name
        triplets, self.dropped = triplets_of(kg)
        rng = np.random.default_rng(seed)
        if max_per_label is not None:
            keep_rows: list[int] = []
            for _, rows in triplets.groupby("relation", sort=True).indices.items():
                if len(rows) > max_per_label:
                    rows = rng.choice(rows, max_per_label, replace=False)
                keep_rows += [int(r) for r in rows]
            triplets = triplets.iloc[sorted(keep_rows)].reset_index(drop=True)
        if max_triplets is not None and len(triplets) > max_triplets:
            keep = np.sort(rng.choice(len(triplets), max_triplets, replace=False))
            triplets = triplets.iloc[keep].reset_index(drop=True)
        if len(triplets) < 2:
            raise EmptyResultError(
                f"relation classification needs at least 2 relation triplets between KG "
                f"concepts, the KG has {len(triplets)}"
            )
        self.triplets = triplets
        self.labels: list[str] = sorted(set(triplets["relation"]))
        self.train_idx, self.test_idx = seeded_split(len(triplets), test_fraction, seed)

    def _targets(self, idx: np.ndarray) -> torch.Tensor:
        label_index = {label: i for i, label in enumerate(self.labels)}
        rel = self.triplets["relation"].to_numpy()[idx]
        return torch.tensor([label_index[r] for r in rel], dtype=torch.long)

    def _fit(
        self, features: Features, params: Sequence[dict[str, object]], classifier: nn.Linear
    ) -> None:
        """Mini-batch Adam on the training triplets only."""
        y_train = self._targets(self.train_idx)
        optimiser = torch.optim.Adam(params)  # type: ignore[arg-type]
        generator = torch.Generator().manual_seed(self.seed)
        for _ in range(self.epochs):
            order = torch.randperm(len(self.train_idx), generator=generator).numpy()
            for start in range(0, len(order), self.batch_size):
                batch = order[start : start + self.batch_size]
                logits = classifier(features(self.train_idx[batch]))  # [B, R]
                loss = F.cross_entropy(logits, y_train[batch].to(logits.device))
                optimiser.zero_grad()
                loss.backward()
                optimiser.step()

    def _classifier(self, dim: int, device: torch.device | None = None) -> nn.Linear:
        classifier = nn.Linear(2 * dim, len(self.labels))
        nn.init.zeros_(classifier.weight)
        nn.init.zeros_(classifier.bias)
        return classifier.to(device) if device is not None else classifier

    def _run_feature(self, model: Embedder) -> tuple[Features, nn.Linear]:
        ends = sorted(set(self.triplets["head"]) | set(self.triplets["tail"]))
        ids, vecs, mask = concept_vectors(self.kg, model, self.vectors, ends)
        row = {cid: i for i, cid in enumerate(ids)}
        if not mask.all():
            logger.warning("relation: %d concepts have no embeddable name", int((~mask).sum()))
        table = torch.from_numpy(vecs)  # [C, d]
        heads = torch.tensor([row[h] for h in self.triplets["head"]], dtype=torch.long)
        tails = torch.tensor([row[t] for t in self.triplets["tail"]], dtype=torch.long)

        def features(idx: np.ndarray) -> torch.Tensor:
            i = torch.from_numpy(np.asarray(idx, dtype=np.int64))
            return torch.cat([table[heads[i]], table[tails[i]]], dim=-1)  # [B, 2d]

        torch.manual_seed(self.seed)
        classifier = self._classifier(vecs.shape[1])
        self._fit(features, [{"params": classifier.parameters(), "lr": self.lr}], classifier)
        return features, classifier

    def _run_fine_tune(self, model: Embedder) -> tuple[Features, nn.Linear]:
        from termnorm.encoders import TermEncoder

        if not isinstance(model, TermEncoder):
            raise TypeError("fine-tune mode needs a TermEncoder (a transformer it can train)")
        encoder = TermEncoder(
            copy.deepcopy(model.model),
            model.tokenizer,
            model.pooling,
            max_length=model.max_length,
            device=model.device,
        )
        names = self.kg.concept_names()
        head_names = [names.get(h, "") for h in self.triplets["head"]]
        tail_names = [names.get(t, "") for t in self.triplets["tail"]]

        def features(idx: np.ndarray) -> torch.Tensor:
            texts = [head_names[i] for i in idx] + [tail_names[i] for i in idx]
            vec = F.normalize(encoder.embed(texts).float(), dim=-1)  # [2B, d]
            return torch.cat([vec[: len(idx)], vec[len(idx) :]], dim=-1)  # [B, 2d]

        torch.manual_seed(self.seed)
        classifier = self._classifier(encoder.dimension, encoder.device)
        encoder.model.train()
        self._fit(
            features,
            [
                {"params": encoder.model.parameters(), "lr": self.encoder_lr},
                {"params": classifier.parameters(), "lr": self.lr},
            ],
            classifier,
        )
        encoder.model.eval()
        return features, classifier

    def _accuracy(self, features: Features, classifier: nn.Linear, idx: np.ndarray) -> float:
        with torch.no_grad():
            pred = torch.cat(
                [
                    classifier(features(idx[s : s + self.batch_size])).argmax(-1).cpu()
                    for s in range(0, len(idx), self.batch_size)
                ]
            )
        return float((pred == self._targets(idx)).float().mean())

    def evaluate(self, model: Embedder) -> RelationResult:
        """Train on the training split, report accuracy on the held-out split."""
        run = self._run_feature if self.mode is RelationMode.FEATURE else self._run_fine_tune
        features, classifier = run(model)
        y_train = self._targets(self.train_idx)
        majority_label = int(torch.bincount(y_train, minlength=len(self.labels)).argmax())
        majority = float((self._targets(self.test_idx) == majority_label).float().mean())
        return RelationResult(
            accuracy=self._accuracy(features, classifier, self.test_idx),
            train_accuracy=self._accuracy(features, classifier, self.train_idx),
            majority=majority,
            labels=len(self.labels),
            train=len(self.train_idx),
            test=len(self.test_idx),
            dropped=self.dropped,
        )
