"""The KGE entity table seen as a text ``Embedder``, so the embedding evaluators score it.

The evaluators in ``termnorm.evaluation`` take anything with ``encode(texts) -> [n, d]`` and
report texts that come back as a zero vector as *not embeddable* (skipped, counted in their
coverage). Two adapters:

* :class:`ConceptIdEmbedder`: the texts are concept IDs; used with :func:`kg_named_by_id`
  (the same KG with each concept's name replaced by its ID) so that MCSM, which embeds
  preferred names, embeds the concepts' entity vectors.
* :class:`TermEmbedder`: the texts are terms (e.g. MayoSRS/UMNSRS pairs); a term maps to a
  concept when it equals one of the KG's terms or names after case folding and whitespace
  collapsing, and the concept is unique: a term that is the preferred name of exactly one
  concept maps there; otherwise it must be a synonym of exactly one concept. Unmatched and
  ambiguous terms, and concepts without an entity vector, give a zero row.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from termnorm.kg import KnowledgeGraph
from termnorm.kge.vectors import KGEVectors

__all__ = ["ConceptIdEmbedder", "TermConcepts", "TermEmbedder", "kg_named_by_id", "term_key"]


def term_key(text: str) -> str:
    """Case-folded text with runs of whitespace collapsed (the matching key of a term)."""
    return " ".join(text.casefold().split())


def kg_named_by_id(kg: KnowledgeGraph) -> KnowledgeGraph:
    """``kg`` with every concept's ``name`` set to its ``concept_id`` (other tables shared)."""
    concepts = kg.concepts.assign(name=kg.concepts["concept_id"].astype(str))
    return KnowledgeGraph(concepts=concepts, terms=kg.terms, relations=kg.relations, card=kg.card)


class ConceptIdEmbedder:
    """``encode(concept_ids)``: the unit entity vectors; zero rows for unknown IDs."""

    def __init__(self, kge: KGEVectors) -> None:
        self.kge = kge

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """``[len(texts), d]`` float32."""
        return self.kge.unit_vectors(list(texts))[0]


class TermConcepts:
    """The one KG concept a term names (see the module doc), or ``None``."""

    def __init__(self, kg: KnowledgeGraph) -> None:
        preferred: dict[str, set[str]] = {}
        for cid, name in zip(kg.concepts["concept_id"], kg.concepts["name"], strict=True):
            preferred.setdefault(term_key(str(name)), set()).add(str(cid))
        synonyms: dict[str, set[str]] = {}
        for cid, term in zip(kg.terms["concept_id"], kg.terms["term"], strict=True):
            synonyms.setdefault(term_key(str(term)), set()).add(str(cid))
        self._preferred, self._synonyms = preferred, synonyms

    def concept_of(self, text: str) -> str | None:
        """The concept ``text`` names, or ``None`` (unmatched or ambiguous)."""
        key = term_key(text)
        for table in (self._preferred, self._synonyms):
            ids = table.get(key)
            if ids:
                return next(iter(ids)) if len(ids) == 1 else None
        return None


class TermEmbedder(TermConcepts):
    """``encode(terms)``: the unit entity vector of the one concept a term names (see the
    module doc); zero rows for unmatched or ambiguous terms."""

    def __init__(self, kge: KGEVectors, kg: KnowledgeGraph) -> None:
        super().__init__(kg)
        self.kge = kge

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """``[len(texts), d]`` float32."""
        concepts = [self.concept_of(t) for t in texts]
        return self.kge.unit_vectors([c if c is not None else "" for c in concepts])[0]
