"""Shared pieces of the embedding evaluators (MCSM, relation classification, clustering,
relatedness, link prediction).

Every evaluator has one shape (sentence-transformers' evaluators)::

    evaluator = SomeEvaluator(data, name="...", **options)
    metrics = evaluator(model)          # {"<name>_<metric>": float, ...}
    evaluator.primary_metric            # the key to rank models by
    result = evaluator.evaluate(model)  # typed result with the details (curves, per-type rows)

``model`` is anything with ``encode(texts) -> float32 [n, d]`` (an :class:`Embedder`); a
:class:`~termnorm.encoders.TermEncoder` is one. Texts a model cannot embed (empty or
whitespace-only strings, vectors that are not finite or have zero norm) are *reported* by the
helpers here (a ``False`` in the returned mask), never turned into a crash or a silent zero.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from enum import Enum
from typing import Any, ClassVar, Protocol, runtime_checkable

import numpy as np

from termnorm.evaluation.metric_names import prefixed
from termnorm.kg import KnowledgeGraph

__all__ = [
    "ConceptVector",
    "Embedder",
    "EmbeddingEvaluator",
    "concept_vectors",
    "encode_texts",
    "seeded_split",
]


@runtime_checkable
class Embedder(Protocol):
    """Text → vectors. ``TermEncoder`` and test doubles satisfy it."""

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """``[len(texts), d]`` float32 vectors, in input order."""
        ...


class EmbeddingEvaluator(ABC):
    """The shape above: ``evaluator(model)`` is :meth:`evaluate`'s ``metrics()`` prefixed
    with ``name``; ``primary_metric`` (``<name>_<primary>``) ranks models, higher is better."""

    name: str
    primary: ClassVar[str]

    @property
    def primary_metric(self) -> str:
        """``<name>_<primary>``."""
        return f"{self.name}_{self.primary}"

    @abstractmethod
    def evaluate(self, model: Embedder) -> Any:
        """A typed result with the details; its ``metrics()`` are the unprefixed metrics."""

    def __call__(self, model: Embedder) -> dict[str, float]:
        """Metrics of ``model``, prefixed with ``name``."""
        return prefixed(self.name, self.evaluate(model).metrics())


class ConceptVector(str, Enum):
    """How a concept is represented: its preferred name, or the mean of all its terms."""

    NAME = "name"
    MEAN = "mean"


def encode_texts(model: Embedder, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Encode ``texts`` (each distinct string once); return L2-normalised vectors and a mask.

    ``mask[i]`` is ``False`` when text *i* could not be embedded: it is empty or whitespace
    only, or the model returned a non-finite or zero vector for it. Its row is all zeros.
    """
    texts = [t if isinstance(t, str) else "" for t in texts]
    distinct = sorted({t for t in texts if t.strip()})
    position = {t: i for i, t in enumerate(distinct)}
    if distinct:
        raw = np.asarray(model.encode(distinct), dtype=np.float32)
        if raw.ndim != 2 or raw.shape[0] != len(distinct):
            raise ValueError(
                f"the model returned an array of shape {raw.shape} for {len(distinct)} texts"
            )
    else:
        raw = np.zeros((0, 1), dtype=np.float32)
    dim = raw.shape[1]
    norms = np.linalg.norm(raw, axis=1) if len(raw) else np.zeros(0, dtype=np.float32)
    good = np.isfinite(raw).all(axis=1) & np.isfinite(norms) & (norms > 0)
    unit = np.zeros_like(raw)
    unit[good] = raw[good] / norms[good, None]
    out = np.zeros((len(texts), dim), dtype=np.float32)
    mask = np.zeros(len(texts), dtype=bool)
    for i, text in enumerate(texts):
        j = position.get(text)
        if j is not None and good[j]:
            out[i] = unit[j]
            mask[i] = True
    return out, mask


def concept_vectors(
    kg: KnowledgeGraph,
    model: Embedder,
    how: ConceptVector | str = ConceptVector.NAME,
    concept_ids: Sequence[str] | None = None,
) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Unit vectors of concepts: ``(ids, vectors [n, d], mask [n])``.

    ``name`` embeds the preferred name; ``mean`` averages the unit vectors of all the
    concept's terms (preferred name included) and re-normalises. ``mask`` is ``False`` for a
    concept with no embeddable text.
    """
    how = ConceptVector(how)
    names = kg.concept_names()
    ids = list(concept_ids) if concept_ids is not None else list(kg.concepts["concept_id"])
    if how is ConceptVector.NAME:
        vectors, mask = encode_texts(model, [names.get(cid, "") for cid in ids])
        return ids, vectors, mask
    synonyms = kg.terms_by_concept()
    groups = [[names.get(cid, ""), *synonyms.get(cid, [])] for cid in ids]
    flat = [t for group in groups for t in group]
    term_vecs, term_mask = encode_texts(model, flat)
    vectors = np.zeros((len(ids), term_vecs.shape[1]), dtype=np.float32)
    mask = np.zeros(len(ids), dtype=bool)
    start = 0
    for i, group in enumerate(groups):
        rows = slice(start, start + len(group))
        start += len(group)
        ok = term_mask[rows]
        if ok.any():
            mean = term_vecs[rows][ok].mean(axis=0)
            norm = float(np.linalg.norm(mean))
            if norm > 0:
                vectors[i] = mean / norm
                mask[i] = True
    return ids, vectors, mask


def seeded_split(n: int, test_fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Deterministic split of ``range(n)`` into sorted ``(train, test)`` index arrays.

    The same ``(n, test_fraction, seed)`` always gives the same split; the two parts are
    disjoint and cover ``range(n)``. ``test`` has ``round(n * test_fraction)`` items, at least
    one and at most ``n - 1`` when ``n >= 2``.
    """
    if not 0.0 < test_fraction < 1.0:
        raise ValueError(f"test_fraction must be in (0, 1), got {test_fraction}")
    order = np.random.default_rng(seed).permutation(n)
    n_test = round(n * test_fraction)
    if n >= 2:
        n_test = min(max(n_test, 1), n - 1)
    return np.sort(order[n_test:]), np.sort(order[:n_test])
