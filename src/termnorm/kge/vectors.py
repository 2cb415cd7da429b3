"""Entity and relation vectors of a trained KGE, and cosine lookups between concepts.

Every vector is stored *real*: a real-valued model's embedding as is; a complex one (ComplEx,
RotatE), of complex dimension d, as ``[Re; Im]`` of size 2d; SimplE's two embeddings of an
entity (as head, as tail) concatenated ``[h; t]``. Similarity is the cosine of these real
vectors. For complex vectors this is ``Re⟨a, b̄⟩ / (‖a‖‖b‖)``, the real part of the normalised
Hermitian product (the part ComplEx's score is built from), since ``Re⟨a, b̄⟩ = Re a·Re b +
Im a·Im b``. Values lie in [−1, 1]; a concept with itself gives 1.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["KGEVectors", "unit_rows"]


def unit_rows(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit L2 norm (float32); a zero row stays zero."""
    v = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(v, axis=1, keepdims=True)  # [n, 1]
    return np.divide(v, norms, out=np.zeros_like(v), where=norms > 0)


@dataclass(eq=False)
class KGEVectors:
    """The KGE of a KG: one real vector per entity (a concept ID) and per relation label.

    ``card`` is the folder's ``kge.json`` (model, KG fingerprint, split, metrics, versions).
    """

    concept_ids: list[str]
    vectors: np.ndarray  # [n_entities, d] float32
    relation_labels: list[str]
    relation_vectors: np.ndarray  # [n_relations, d_r] float32
    card: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if len(self.concept_ids) != len(self.vectors):
            raise ValueError(
                f"{len(self.concept_ids)} concept IDs for {len(self.vectors)} entity vectors"
            )
        if len(self.relation_labels) != len(self.relation_vectors):
            raise ValueError(
                f"{len(self.relation_labels)} relation labels for "
                f"{len(self.relation_vectors)} relation vectors"
            )
        self._row = {cid: i for i, cid in enumerate(self.concept_ids)}
        self._unit = unit_rows(self.vectors)  # [n_entities, d]

    @property
    def dim(self) -> int:
        """Size of the (real) entity vectors."""
        return int(self.vectors.shape[1])

    def has(self, concept_ids: Sequence[str]) -> np.ndarray:
        """``[n]`` bool: whether each concept has an entity vector (it occurs in a relation)."""
        return np.array([cid in self._row for cid in concept_ids], dtype=bool)

    def unit_vectors(self, concept_ids: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """``(vectors [n, d], mask [n])``: unit entity vectors, zero rows where ``mask`` is
        ``False`` (the concept has no entity vector)."""
        rows = np.array([self._row.get(cid, -1) for cid in concept_ids], dtype=np.int64)
        mask = rows >= 0
        out = np.zeros((len(rows), self.dim), dtype=np.float32)
        out[mask] = self._unit[rows[mask]]
        return out, mask

    def similarity(
        self,
        concept_a_ids: Sequence[str],
        concept_b_ids: Sequence[str],
        missing: float | None = None,
    ) -> np.ndarray:
        """Cosine similarity matrix ``[len(a), len(b)]`` (float32, in [−1, 1]) of the concepts'
        entity vectors (see the module doc for complex models).

        A concept without an entity vector raises ``KeyError`` naming it, unless ``missing``
        is given: then every pair involving such a concept gets that value.
        """
        a, mask_a = self.unit_vectors(concept_a_ids)
        b, mask_b = self.unit_vectors(concept_b_ids)
        if missing is None and not (mask_a.all() and mask_b.all()):
            absent = [c for c, ok in zip(concept_a_ids, mask_a, strict=True) if not ok]
            absent += [c for c, ok in zip(concept_b_ids, mask_b, strict=True) if not ok]
            raise KeyError(
                f"{len(set(absent))} concept(s) have no KGE vector (no relation in the KG the KGE "
                f"was trained on), e.g. {sorted(set(absent))[:5]}; check with has(), or pass "
                "missing=<value> to give their pairs a fixed similarity"
            )
        sim = np.clip(a @ b.T, -1.0, 1.0)  # [len(a), len(b)]
        if missing is not None:
            sim[~mask_a, :] = missing
            sim[:, ~mask_b] = missing
        return sim.astype(np.float32)
