"""Link prediction of several models on the same held-out triplets: KGEs beside relation heads.

Each model is a :class:`TailScorer`: it names the concepts and relations it knows and scores
(h, r, c) for candidate tails c. :func:`compare_link_prediction` makes the comparison fair:

* one candidate set: the KG concepts *every* model can score (an encoder embeds every named
  concept, a KGE only the entities of its training triples);
* one set of triplets: those whose head and tail are candidates and whose relation every
  model knows (the rest are counted as ``dropped``, for all models alike);
* one ranking: for (h, r, t) the rank of t among the candidates other than h, *filtered*
  (every other tail of (h, r) known in the KG or among the evaluated triplets removed;
  ``filtered=False`` keeps them), realistic ties (``1 + #{S > S_t} + #{c ≠ t: S = S_t} / 2``),
  tails only.

Reported per model: hits@1, hits@3, hits@10, MR, MRR (:func:`rank_metrics`). A KGE card's own
figures rank both heads and tails among all its entities, so they differ from these.

:class:`EncoderTailScorer` adapts an encoder with the relation head ``termnorm train`` saves
(``MODEL_DIR/relations/``); the KGE adapter is :class:`termnorm.kge.KGETailScorer`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np
import pandas as pd
import torch

from termnorm.errors import ArtifactMismatchError, EmptyResultError
from termnorm.evaluation.embedding import ConceptVector, Embedder, concept_vectors
from termnorm.evaluation.relation_classification import triplets_of
from termnorm.kg import KnowledgeGraph

__all__ = [
    "EncoderTailScorer",
    "LinkPredComparison",
    "RelationScorer",
    "TailScorer",
    "compare_link_prediction",
    "rank_metrics",
]

HITS_AT = (1, 3, 10)


class RelationScorer(Protocol):
    """What link prediction needs from a relation head (``losses.RelationHead`` has it)."""

    labels: list[str]

    def score(self, h: torch.Tensor, rel_idx: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        """S_rel for heads ``[B, d]`` with relation indices ``[B]`` against tails ``[N, d]``."""
        ...


def rank_metrics(ranks: np.ndarray) -> dict[str, float]:
    """hits@1/3/10, MR and MRR of 1-based (possibly fractional) ranks."""
    out = {f"hits@{k}": float((ranks <= k).mean()) for k in HITS_AT}
    out["mr"] = float(ranks.mean())
    out["mrr"] = float((1.0 / ranks).mean())
    return out


class TailScorer(Protocol):
    """A model that ranks tails: ``labels`` (relations it knows), ``concepts()`` and
    ``score_tails(heads, relations, candidates) -> [B, N]`` (higher = more plausible)."""

    labels: Sequence[str]

    def concepts(self) -> set[str]:
        """Concepts the model can place at either end of a triplet."""
        ...

    def score_tails(
        self, heads: Sequence[str], relations: Sequence[str], candidates: Sequence[str]
    ) -> np.ndarray:
        """``[len(heads), len(candidates)]`` scores."""
        ...


class EncoderTailScorer:
    """An encoder's concept vectors (preferred names, or the mean of synonyms) scored by its
    relation head S_rel(h, r, t) (CODER's cos(M_rᵀ e_h, e_t), or the TransE-like head):
    ``head``, else the one saved in the model's folder.

    Raises:
        ArtifactMismatchError: the model folder has no relation head, or one for vectors
            of another size.
    """

    def __init__(
        self,
        model: Embedder,
        kg: KnowledgeGraph,
        vectors: ConceptVector | str = ConceptVector.NAME,
        *,
        head: RelationScorer | None = None,
    ) -> None:
        path = getattr(model, "path", None)
        self.head = head if head is not None else _saved_head(path)
        ids, vecs, mask = concept_vectors(kg, model, vectors)
        dim = getattr(self.head, "dim", vecs.shape[1])
        if dim != vecs.shape[1]:
            raise ArtifactMismatchError(
                f"the relation head of {path or 'this model'} works on {dim}-d vectors but the "
                f"model gives {vecs.shape[1]}-d ones; use the model folder it was trained with"
            )
        self.row = {cid: i for i, cid in enumerate(ids) if mask[i]}
        self.vectors = torch.from_numpy(vecs)
        self.labels: Sequence[str] = list(self.head.labels)
        self.label_index = {label: i for i, label in enumerate(self.labels)}
        self.name = f"encoder {Path(path or '').name or 'in memory'} (relation head)"

    def concepts(self) -> set[str]:
        """Concepts with an embeddable name."""
        return set(self.row)

    def score_tails(
        self, heads: Sequence[str], relations: Sequence[str], candidates: Sequence[str]
    ) -> np.ndarray:
        """S_rel(h_b, r_b, c) for every candidate c."""
        h = self.vectors[[self.row[x] for x in heads]]  # [B, d]
        r = torch.tensor([self.label_index[x] for x in relations], dtype=torch.long)  # [B]
        c = self.vectors[[self.row[x] for x in candidates]]  # [N, d]
        with torch.no_grad():
            return self.head.score(h, r, c).float().cpu().numpy()


def _saved_head(path: str | Path | None) -> RelationScorer:
    """The relation head in ``path/relations/``; :class:`ArtifactMismatchError` without one."""
    if path is None or not (Path(path) / "relations" / "config.json").is_file():
        raise ArtifactMismatchError(
            f"{path or 'this model'} has no relation head (relations/); train one with "
            "'termnorm train --loss coder' (or transe), or compare KGEs only"
        )
    from termnorm.losses.relation_head import RelationHead

    return RelationHead.load(Path(path))


@dataclass
class LinkPredComparison:
    """Metrics per model name, and what all of them were measured on."""

    metrics: dict[str, dict[str, float]]
    triplets: int
    dropped: int
    candidates: int
    filtered: bool

    def to_dict(self) -> dict[str, object]:
        """JSON-ready."""
        return {
            "triplets": self.triplets,
            "dropped": self.dropped,
            "candidates": self.candidates,
            "filtered": self.filtered,
            "models": self.metrics,
        }


def compare_link_prediction(
    kg: KnowledgeGraph,
    scorers: Mapping[str, TailScorer],
    triplets: pd.DataFrame,
    filtered: bool = True,
    batch_size: int = 256,
) -> LinkPredComparison:
    """Rank the tails of ``triplets`` with every scorer on one candidate set (module doc).

    Raises:
        EmptyResultError: no scorer, or no triplet every scorer can rank.
    """
    if not scorers:
        raise EmptyResultError("nothing to compare: give at least one model or KGE")
    concepts = set(kg.concepts["concept_id"])
    for scorer in scorers.values():
        concepts &= scorer.concepts()
    candidates = sorted(concepts)
    column = {cid: i for i, cid in enumerate(candidates)}
    labels = set.intersection(*(set(s.labels) for s in scorers.values()))
    triplets = triplets[["head", "relation", "tail"]].astype(str).drop_duplicates()
    usable = triplets[
        triplets["head"].isin(column)
        & triplets["tail"].isin(column)
        & triplets["relation"].isin(labels)
        & (triplets["head"] != triplets["tail"])
    ].reset_index(drop=True)
    if usable.empty:
        raise EmptyResultError(
            f"none of the {len(triplets)} triplets can be ranked by every model (relations "
            f"all know: {sorted(labels)[:10]}; {len(candidates)} concepts all can score)"
        )
    known: dict[tuple[str, str], list[int]] = {}
    if filtered:
        everything = pd.concat([triplets_of(kg)[0], usable], ignore_index=True)
        for h, r, t in everything[["head", "relation", "tail"]].itertuples(index=False):
            if t in column:
                known.setdefault((h, r), []).append(column[t])
    heads, rels, tails = (usable[c].tolist() for c in ("head", "relation", "tail"))
    metrics = {}
    for name, scorer in scorers.items():
        ranks = np.empty(len(usable), dtype=np.float64)
        for s in range(0, len(usable), batch_size):
            sl = slice(s, s + batch_size)
            scores = scorer.score_tails(heads[sl], rels[sl], candidates).astype(np.float64)
            for b, (h, r, t) in enumerate(zip(heads[sl], rels[sl], tails[sl], strict=True)):
                row = scores[b]
                target = row[column[t]]
                row[column[h]] = -np.inf  # never the head itself
                for other in known.get((h, r), []):
                    if other != column[t]:
                        row[other] = -np.inf
                ties = int((row == target).sum()) - 1  # the target itself
                ranks[s + b] = 1 + int((row > target).sum()) + 0.5 * ties
        metrics[name] = rank_metrics(ranks)
    return LinkPredComparison(
        metrics=metrics,
        triplets=len(usable),
        dropped=len(triplets) - len(usable),
        candidates=len(candidates),
        filtered=filtered,
    )
