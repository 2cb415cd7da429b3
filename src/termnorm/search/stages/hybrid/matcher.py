"""Hybrid recall (BioSyn, Sung et al. 2020): dense and sparse candidates, one list, one score.

:class:`HybridMatcher` wraps a dense :class:`~termnorm.search.SpaceMatcher` and a char 3-gram
TF-IDF matcher (:class:`~termnorm.search.lexical.TfidfMatcher`) fitted over the same texts
(:func:`space_kg`). For a query q, the candidates are the union of the dense top ``k_dense``
and the sparse top ``k_sparse`` (a concept once, dense order first); each gets a dense score
d (the dense side's, else the best cosine of the concept's texts) and a sparse score s (the
best TF-IDF cosine of its texts), and they are ordered by h = w·d + (1 − w)·s (w fitted by
:func:`termnorm.search.stages.hybrid.fit.fit_hybrid`), ties keeping the merged order.
``score`` is h, ``recall_score`` d; ``matched_term`` and its provenance are the dense side's
(a sparse-only candidate reports its best-cosine text). The dense side's filter holds for
sparse candidates too, ``min_score`` applies to h, and query problems are the dense side's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from termnorm.index.term_index import TermIndex
from termnorm.kg.graph import KnowledgeGraph
from termnorm.search.candidate import TIE_DECIMALS, Candidate, RowAnswers, RowResult
from termnorm.search.domain import SearchSpace
from termnorm.search.identity import canonical
from termnorm.search.lexical.tfidf import TfidfMatcher
from termnorm.search.parts import Part
from termnorm.search.query import query_problem
from termnorm.search.space_matcher import SpaceMatcher, abstained
from termnorm.search.strategies import ModuleSpec, Representation, Target

__all__ = [
    "DEFAULT_K_DENSE",
    "DEFAULT_K_SPARSE",
    "HybridConfig",
    "HybridMatcher",
    "ScoredCandidates",
    "space_kg",
]

DEFAULT_K_DENSE = 20
DEFAULT_K_SPARSE = 20


@dataclass(frozen=True)
class HybridConfig:
    """The hybrid score's dense weight w ∈ [0, 1] and how many candidates each side gives."""

    weight: float
    k_dense: int = DEFAULT_K_DENSE
    k_sparse: int = DEFAULT_K_SPARSE

    def __post_init__(self) -> None:
        if not 0.0 <= self.weight <= 1.0:
            raise ValueError(f"the hybrid weight must be in [0, 1], got {self.weight}")
        if self.k_dense < 1 or self.k_sparse < 1:
            raise ValueError(
                f"k_dense and k_sparse must be >= 1, got {self.k_dense}, {self.k_sparse}"
            )


@dataclass(frozen=True)
class ScoredCandidates:
    """One query's merged candidates (dense order, then sparse-only ones) with both scores."""

    candidates: list[Candidate]
    dense: np.ndarray  # float64 [n]
    sparse: np.ndarray  # float64 [n]

    def order(self, weight: float) -> np.ndarray:
        """Indices of the candidates by h = w·d + (1 − w)·s, best first; ties (to
        :data:`~termnorm.search.candidate.TIE_DECIMALS`) keep the merged order (module doc)."""
        h = np.round(weight * self.dense + (1.0 - weight) * self.sparse, TIE_DECIMALS)
        return np.argsort(-h, kind="stable")


def space_kg(space: SearchSpace, with_domain: bool = True) -> KnowledgeGraph:
    """The index's concepts and terms plus (``with_domain``) the space's domain synonyms as
    one in-memory KG (what the sparse side is fitted on)."""
    index = space.index
    terms = index.terms[["concept_id", "term", "source", "is_preferred"]]
    if with_domain and space.domain is not None and len(space.domain):
        domain = pd.DataFrame(
            {
                "concept_id": list(space.domain.concept_ids),
                "term": list(space.domain.texts),
                "source": list(space.domain.sources),
                "is_preferred": False,
            }
        )
        terms = pd.concat([terms, domain], ignore_index=True)
    concepts = index.concepts[["concept_id", "name", "semantic_types", "alt_ids"]]
    return KnowledgeGraph.from_records(concepts, terms)


class _ConceptTexts:
    """For each concept row, its rows in each text part (for the exact dense score)."""

    def __init__(self, parts: Sequence[Part]) -> None:
        self.parts = list(parts)
        self._groups = []
        for part in self.parts:
            order = np.argsort(part.concept, kind="stable")
            keys = part.concept[order]
            self._groups.append((order, keys))

    def best(self, query: np.ndarray, concept: int) -> tuple[float, int, int] | None:
        """``(cosine, part, row)`` of the concept's best text, ``None`` without texts."""
        best: tuple[float, int, int] | None = None
        for p, (order, keys) in enumerate(self._groups):
            lo, hi = np.searchsorted(keys, [concept, concept + 1])
            if lo == hi:
                continue
            rows = np.sort(order[lo:hi])
            scores = np.asarray(self.parts[p].vectors[rows], dtype=np.float32) @ query
            i = int(np.argmax(scores))
            if best is None or float(scores[i]) > best[0]:
                best = (float(scores[i]), p, int(rows[i]))
        return best


class HybridMatcher(RowAnswers):
    """Dense + sparse recall (module doc); a :class:`~termnorm.search.candidate.RowMatcher`."""

    def __init__(
        self, dense: SpaceMatcher, config: HybridConfig, sparse: TfidfMatcher | None = None
    ) -> None:
        if any(m.representation is not Representation.T for m in dense.config.strategy.modules):
            raise ValueError(
                f"hybrid recall needs a term strategy (o-t, d-t, od-t or a sieve of them), "
                f"got {dense.config.strategy}"
            )
        self.min_score = dense.config.min_score
        self.dense = dense if self.min_score is None else _without_min(dense)
        self.config = config
        space = dense.space
        uses_domain = dense.config.strategy.needs_domain
        self.sparse = sparse if sparse is not None else TfidfMatcher(space_kg(space, uses_domain))
        target = Target.OD if uses_domain else Target.O
        self._texts = _ConceptTexts(space.parts(ModuleSpec(target, Representation.T)))
        self._row = {str(c): i for i, c in enumerate(space.columns.ids)}
        self._allowed = space.allowed(dense.config.filter)
        self.name = f"hybrid({dense.name}+tfidf,w={config.weight:g})"

    @property
    def index(self) -> TermIndex:
        """The ontology index searched."""
        return self.dense.index

    @property
    def max_chars(self) -> int:
        """The longest accepted query."""
        return self.dense.max_chars

    def alt_ids(self, concept_id: str) -> tuple[str, ...]:
        """Other IDs of a concept, from the index."""
        return self.dense.alt_ids(concept_id)

    def identity(self) -> dict[str, Any]:
        """The class and name, the hybrid settings and the dense recall's identity."""
        return {
            **super().identity(),
            "config": canonical(self.config),
            "dense": self.dense.identity(),
        }

    def normalize_rows(self, texts: Sequence[object], k: int = 5) -> list[RowResult]:
        """One :class:`RowResult` per input, in order (module doc)."""
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        problems = [query_problem(t, self.max_chars) for t in texts]
        rows = [i for i, p in enumerate(problems) if p is None]
        out = [RowResult([], p) for p in problems]
        if not rows:
            return out
        queries = [str(texts[i]).strip() for i in rows]
        for row, scored in zip(rows, self.scored(queries), strict=True):
            order = scored.order(self.config.weight)[:k]
            h = self.config.weight * scored.dense + (1.0 - self.config.weight) * scored.sparse
            ranked = [
                scored.candidates[i]._replace(
                    score=float(h[i]), rank=r, recall_score=float(scored.dense[i])
                )
                for r, i in enumerate(order, start=1)
            ]
            out[row] = abstained(ranked, self.min_score)
        return out

    def scored(self, queries: Sequence[str]) -> list[ScoredCandidates]:
        """Each (usable, stripped) query's merged candidates with their dense and sparse
        scores, before any weighting: what the weight is fitted on."""
        vectors = self.dense.encode_queries(list(queries))
        dense_lists = self.dense.search_vectors(vectors, self.config.k_dense)
        sparse_lists = self.sparse.normalize_batch(list(queries), self.config.k_sparse)
        return [
            self._merge(q, v, d, s)
            for q, v, d, s in zip(queries, vectors, dense_lists, sparse_lists, strict=True)
        ]

    def _merge(
        self, query: str, vector: np.ndarray, dense: list[Candidate], sparse: list[Candidate]
    ) -> ScoredCandidates:
        candidates = list(dense)
        dense_scores = [c.score for c in dense]
        seen = {c.concept_id for c in dense}
        for c in sparse:
            row = self._row.get(c.concept_id)
            if c.concept_id in seen or row is None:
                continue
            if self._allowed is not None and not self._allowed[row]:
                continue
            best = self._texts.best(vector, row)
            if best is None:
                continue
            score, p, text_row = best
            text, term_source, preferred = self._texts.parts[p].describe(text_row)
            columns = self.dense.space.columns
            candidates.append(
                Candidate(
                    concept_id=c.concept_id,
                    name=str(columns.names[row]),
                    score=score,
                    matched_term=text,
                    rank=len(candidates) + 1,
                    source=self._texts.parts[p].origin.value,
                    term_source=term_source,
                    is_preferred=preferred,
                    semantic_types=tuple(str(t) for t in columns.semantic_types[row]),
                    attributes=columns.attribute_pairs(row),
                )
            )
            dense_scores.append(score)
            seen.add(c.concept_id)
        sparse_scores = self.sparse.concept_scores(query, [c.concept_id for c in candidates])
        return ScoredCandidates(
            candidates,
            np.asarray(dense_scores, dtype=np.float64),
            np.asarray(sparse_scores, dtype=np.float64),
        )


def _without_min(dense: SpaceMatcher) -> SpaceMatcher:
    """``dense`` without its ``min_score`` (the hybrid applies it to h instead)."""
    return SpaceMatcher(
        dense.space, replace(dense.config, min_score=None), dense.name, dense.batch_size
    )
