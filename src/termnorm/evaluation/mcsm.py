"""MCSM, the medical conceptual similarity measure (Choi et al. 2016; CODER section 4.5).

For a semantic type T, with V(T) the concepts of type T and v(i) the i-th nearest *other*
concept of v by cosine among all concepts of the KG::

    MCSM(V, T, k) = 1/|V(T)| · Σ_{v ∈ V(T)} Σ_{i=1..k} 1_T(v(i)) / log2(i + 1)

k = 40 by default, so the maximum is Σ_{i≤40} 1/log2(i+1) ≈ 11.09. Types come from the KG's
``semantic_types`` column (UMLS semantic types; the HPO and ICD-10-CM loaders put top-level
branches / chapters there). A concept with several types counts in each of them.

Reported: ``mcsm_<T>`` and ``mcsm_<T>_std`` (mean and standard deviation over the concepts of
T), ``mcsm_mean`` (mean over types, the primary metric) and ``mcsm_mean_std`` (standard
deviation of the per-type means), plus ``mcsm_max`` (the analytic maximum for the k used).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from termnorm.errors import EmptyResultError
from termnorm.evaluation.embedding import (
    ConceptVector,
    Embedder,
    EmbeddingEvaluator,
    concept_vectors,
)
from termnorm.index.exact import exact_search
from termnorm.kg import KnowledgeGraph

__all__ = ["MCSMEvaluator", "MCSMResult", "TypeScore", "mcsm_max", "nearest_others"]

logger = logging.getLogger(__name__)


def nearest_others(vectors: np.ndarray, rows: np.ndarray, k: int) -> np.ndarray:
    """Indices ``[len(rows), k]`` of the ``k`` rows of ``vectors`` ``[n, d]`` nearest to each
    of ``rows`` by inner product, the row itself left out (``k < n``).

    Exact search for ``k + 1`` (its tie rule: the smaller index first) without the query's
    own row: the top ``k + 1`` holds the top ``k`` others whether or not it holds the query.
    """
    if len(rows) == 0:
        return np.empty((0, k), dtype=np.int64)
    found = exact_search(vectors, vectors[rows], k + 1).ids  # [q, k + 1]
    return np.stack([ids[ids != row][:k] for ids, row in zip(found, rows, strict=True)])


def mcsm_max(k: int) -> float:
    """Largest possible MCSM for neighbourhood size ``k`` (all k neighbours of type T)."""
    return float(np.sum(1.0 / np.log2(np.arange(2, k + 2))))


@dataclass
class TypeScore:
    """MCSM of one semantic type: mean and standard deviation over its evaluated concepts."""

    semantic_type: str
    mean: float
    std: float
    concepts: int


@dataclass
class MCSMResult:
    """Per-type scores, their mean, and the settings that produced them."""

    k: int
    types: list[TypeScore] = field(default_factory=list)
    concepts: int = 0
    skipped_concepts: int = 0

    @property
    def mean(self) -> float:
        """Mean of the per-type MCSM values."""
        return float(np.mean([t.mean for t in self.types])) if self.types else float("nan")

    @property
    def mean_std(self) -> float:
        """Standard deviation of the per-type MCSM values."""
        return float(np.std([t.mean for t in self.types])) if self.types else float("nan")

    def metrics(self) -> dict[str, float]:
        """Flat metrics without prefix (``mean``, ``<T>``, ``<T>_std``, ...)."""
        out: dict[str, float] = {"mean": self.mean, "mean_std": self.mean_std}
        for t in self.types:
            out[t.semantic_type] = t.mean
            out[f"{t.semantic_type}_std"] = t.std
        out["max"] = mcsm_max(self.k)
        out["concepts"] = float(self.concepts)
        return out

    def to_dict(self) -> dict[str, object]:
        """JSON-ready details (per-type rows)."""
        return {
            "k": self.k,
            "max": mcsm_max(self.k),
            "mcsm_mean": self.mean,
            "mcsm_mean_std": self.mean_std,
            "concepts": self.concepts,
            "skipped_concepts": self.skipped_concepts,
            "types": [t.__dict__ for t in self.types],
        }


class MCSMEvaluator(EmbeddingEvaluator):
    """MCSM per semantic type of a KG, for any :class:`Embedder`.

    Args:
        kg: concepts with ``semantic_types`` (the neighbour pool is every embeddable concept).
        k: neighbourhood size (CODER: 40).
        vectors: ``name`` (preferred name) or ``mean`` (mean of the concept's term vectors).
        types: evaluate only these types (default: every type with ``min_concepts`` concepts).
        min_concepts: skip types with fewer concepts (a type of one concept has no neighbour
            of its own type by construction).
        max_concepts_per_type: evaluate a seeded sample of at most this many concepts per
            type (neighbours are still searched among all concepts); ``None`` = all.
        seed: seed of that sample.
        name: metric prefix.
    """

    primary = "mean"

    def __init__(
        self,
        kg: KnowledgeGraph,
        k: int = 40,
        vectors: ConceptVector | str = ConceptVector.NAME,
        types: Sequence[str] | None = None,
        min_concepts: int = 2,
        max_concepts_per_type: int | None = None,
        seed: int = 0,
        name: str = "mcsm",
    ) -> None:
        if k < 1:
            raise ValueError(f"k must be at least 1, got {k}")
        self.kg = kg
        self.k = k
        self.vectors = ConceptVector(vectors)
        self.types = list(types) if types is not None else None
        self.min_concepts = min_concepts
        self.max_concepts_per_type = max_concepts_per_type
        self.seed = seed
        self.name = name
        self._type_members = self._members()

    def _members(self) -> dict[str, list[int]]:
        """Semantic type → row indices of its concepts in ``kg.concepts``."""
        members: dict[str, list[int]] = {}
        for row, types in enumerate(self.kg.concepts["semantic_types"]):
            for t in types if types is not None else ():
                members.setdefault(str(t), []).append(row)
        if not members:
            raise EmptyResultError(
                "MCSM needs semantic types, and no concept of this KG has one; build the KG "
                "from a source that provides them (UMLS MRSTY, HPO branches, ICD-10 chapters)"
            )
        if self.types is not None:
            missing = [t for t in self.types if t not in members]
            if missing:
                raise ValueError(
                    f"semantic types not in the KG: {missing}; known: {sorted(members)[:20]}"
                )
            members = {t: members[t] for t in self.types}
        kept = {t: rows for t, rows in members.items() if len(rows) >= self.min_concepts}
        if not kept:
            raise EmptyResultError(
                f"no semantic type has at least {self.min_concepts} concepts in this KG"
            )
        return dict(sorted(kept.items()))

    def evaluate(self, model: Embedder) -> MCSMResult:
        """Embed the concepts, find each sampled concept's k nearest others, score per type."""
        _, vecs, mask = concept_vectors(self.kg, model, self.vectors)
        pool = np.flatnonzero(mask)  # rows that can be neighbours
        if len(pool) < 2:
            raise EmptyResultError("MCSM needs at least two embeddable concepts")
        pool_pos = {int(row): i for i, row in enumerate(pool)}
        rng = np.random.default_rng(self.seed)
        queries: dict[str, np.ndarray] = {}
        for t, members in self._type_members.items():
            ok = np.array([r for r in members if mask[r]], dtype=np.int64)
            if self.max_concepts_per_type is not None and len(ok) > self.max_concepts_per_type:
                ok = np.sort(rng.choice(ok, self.max_concepts_per_type, replace=False))
            queries[t] = ok
        all_queries = np.unique(np.concatenate(list(queries.values())))
        base = vecs[pool]
        q_pos = np.array([pool_pos[int(r)] for r in all_queries], dtype=np.int64)
        k = min(self.k, len(pool) - 1)
        neighbours = nearest_others(base, q_pos, k)  # [q, k] pool idx
        row_of_query = {int(r): i for i, r in enumerate(all_queries)}
        discount = 1.0 / np.log2(np.arange(2, k + 2))  # [k]
        pool_types = [set(self.kg.concepts["semantic_types"].iloc[int(r)]) for r in pool]
        result = MCSMResult(k, concepts=len(all_queries), skipped_concepts=int((~mask).sum()))
        for t, rows in queries.items():
            if len(rows) == 0:
                continue
            hits = np.array(
                [[t in pool_types[j] for j in neighbours[row_of_query[int(r)]]] for r in rows],
                dtype=np.float64,
            )  # [|V(T)|, k]
            per_concept = hits @ discount
            result.types.append(
                TypeScore(t, float(per_concept.mean()), float(per_concept.std()), len(rows))
            )
        if result.skipped_concepts:
            logger.warning("MCSM: %d concepts had no embeddable name", result.skipped_concepts)
        return result
