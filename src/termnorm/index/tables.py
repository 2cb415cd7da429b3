"""The term and concept tables an index is built from, and the concept mean vectors.

Cleaning (every drop is counted, the counts go into ``index.json``):

* a concept listed twice keeps its first row (``duplicate_concepts``);
* empty terms, terms of unknown concepts and repeated (concept, term) pairs are dropped
  (``empty_terms``, ``orphan_terms``, ``duplicate_terms``);
* a concept without any term gets its name as a term (``names_added_as_terms``, with an
  empty ``source`` and ``is_preferred`` true); one with neither term nor name is dropped
  (``concepts_without_text``).

Relations (:func:`relation_table`) are the KG's ``head, relation, tail`` rows whose two
ends are concepts of the index (``orphan_relations`` counts the others), with empty ones
(``empty_relations``) and repeats (``duplicate_relations``) dropped.

Each term keeps its provenance from the KG: ``source`` (empty when the KG gives none) and
``is_preferred`` (true when any of the repeated rows of the pair was preferred).

:func:`concept_means` is the one place where concept mean vectors ("C") are computed: for the
index's stored concept vectors and for the domain and ontology+domain means of a search space.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
import pandas as pd

from termnorm.errors import EmptyResultError
from termnorm.kg import KnowledgeGraph
from termnorm.kg.graph import with_attributes

__all__ = [
    "RELATION_COLUMNS",
    "TERM_COLUMNS",
    "IndexTables",
    "concept_means",
    "concept_table",
    "index_tables",
    "relation_table",
    "term_table",
]

logger = logging.getLogger(__name__)

_CHUNK = 1 << 16


def _text(series: pd.Series) -> pd.Series:
    """Strings with missing values as ``""`` and surrounding whitespace removed."""
    return series.fillna("").astype(str).str.strip()


def concept_table(kg: KnowledgeGraph) -> tuple[pd.DataFrame, dict[str, int]]:
    """``concept_id, name, semantic_types, alt_ids, attributes`` with unique IDs, and drop
    counts."""
    columns = ["concept_id", "name", "semantic_types", "alt_ids", "attributes"]
    concepts = with_attributes(kg.concepts)[columns].copy()
    concepts["name"] = _text(concepts["name"])
    duplicated = concepts["concept_id"].duplicated()
    concepts = concepts[~duplicated]
    usable = kg.terms["concept_id"][_text(kg.terms["term"]) != ""]
    has_term = concepts["concept_id"].isin(set(usable))
    no_text = ~has_term & (concepts["name"] == "")
    concepts = concepts[~no_text].reset_index(drop=True)
    counts = {
        "duplicate_concepts": int(duplicated.sum()),
        "concepts_without_text": int(no_text.sum()),
    }
    for reason, n in counts.items():
        if n:
            logger.warning("dropped %d concepts: %s", n, reason)
    return concepts, counts


TERM_COLUMNS = ["concept_id", "term", "source", "is_preferred"]


def term_table(kg: KnowledgeGraph, concepts: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, int]]:
    """``concept_id, term, source, is_preferred`` rows to encode (KG order, then names added
    as terms), and counts."""
    terms = kg.terms[TERM_COLUMNS].copy()
    terms["term"] = _text(terms["term"])
    terms["source"] = _text(terms["source"])
    terms["is_preferred"] = terms["is_preferred"].eq(True)  # missing values are not preferred
    empty = terms["term"] == ""
    orphan = ~empty & ~terms["concept_id"].isin(set(concepts["concept_id"]))
    terms = terms[~empty & ~orphan]
    duplicated = terms.duplicated(["concept_id", "term"])
    if duplicated.any():  # a pair listed twice is preferred when any of its rows is
        preferred = terms.groupby(["concept_id", "term"], sort=False)["is_preferred"]
        terms = terms.assign(is_preferred=preferred.transform("any"))
    terms = terms[~duplicated]
    missing = concepts[~concepts["concept_id"].isin(set(terms["concept_id"]))]
    named = missing[["concept_id", "name"]].rename(columns={"name": "term"})
    named = named.assign(source="", is_preferred=True)
    terms = pd.concat([terms, named], ignore_index=True)
    counts = {
        "empty_terms": int(empty.sum()),
        "orphan_terms": int(orphan.sum()),
        "duplicate_terms": int(duplicated.sum()),
        "names_added_as_terms": len(named),
    }
    for reason in ("empty_terms", "orphan_terms"):
        if counts[reason]:
            logger.warning("dropped %d terms: %s", counts[reason], reason)
    return terms.reset_index(drop=True), counts


RELATION_COLUMNS = ["head", "relation", "tail"]


def relation_table(
    kg: KnowledgeGraph, concepts: pd.DataFrame
) -> tuple[pd.DataFrame, dict[str, int]]:
    """``head, relation, tail`` rows between concepts of ``concepts`` (KG order), and counts."""
    relations = kg.relations[RELATION_COLUMNS].copy()
    for col in RELATION_COLUMNS:
        relations[col] = _text(relations[col])
    empty = (relations[RELATION_COLUMNS] == "").any(axis=1)
    known = set(concepts["concept_id"])
    orphan = ~empty & ~(relations["head"].isin(known) & relations["tail"].isin(known))
    relations = relations[~empty & ~orphan]
    duplicated = relations.duplicated(RELATION_COLUMNS)
    relations = relations[~duplicated].reset_index(drop=True)
    counts = {
        "relations": len(relations),
        "empty_relations": int(empty.sum()),
        "orphan_relations": int(orphan.sum()),
        "duplicate_relations": int(duplicated.sum()),
    }
    for reason in ("empty_relations", "orphan_relations"):
        if counts[reason]:
            logger.warning("dropped %d relations: %s", counts[reason], reason)
    return relations, counts


def concept_means(
    term_vectors: np.ndarray, term_concept: np.ndarray, n_concepts: int
) -> np.ndarray:
    """Row ``j``: the L2-normalised mean of the term vectors whose concept row is ``j``.

    ``c_j = Σ_{i: concept(i)=j} t_i / ‖Σ_{i: concept(i)=j} t_i‖`` (a zero sum stays zero).
    """
    sums = np.zeros((n_concepts, term_vectors.shape[1]), dtype=np.float32)
    for start in range(0, len(term_vectors), _CHUNK):  # bounded temporaries (memory-mapped input)
        block = np.asarray(term_vectors[start : start + _CHUNK], dtype=np.float32)
        np.add.at(sums, term_concept[start : start + _CHUNK], block)
    norms = np.linalg.norm(sums, axis=1, keepdims=True)
    sums /= np.maximum(norms, 1e-12)
    return sums


@dataclass(frozen=True)
class IndexTables:
    """Everything an index build takes from a KG before encoding: the cleaned tables, their
    drop counts, and the distinct term strings (``uniques``, in order of first appearance)
    with each term row's position among them (``codes``)."""

    concepts: pd.DataFrame
    terms: pd.DataFrame
    relations: pd.DataFrame
    counts: dict[str, int]
    codes: np.ndarray
    uniques: pd.Index


def index_tables(kg: KnowledgeGraph) -> IndexTables:
    """The :class:`IndexTables` of ``kg`` (:class:`~termnorm.errors.EmptyResultError` when
    no term is usable)."""
    concepts, concept_counts = concept_table(kg)
    terms, term_counts = term_table(kg, concepts)
    relations, relation_counts = relation_table(kg, concepts)
    if len(terms) == 0:
        raise EmptyResultError("the KG has no usable term; nothing to index")
    codes, uniques = pd.factorize(terms["term"])
    counts = {
        "terms": len(terms),
        "distinct_strings": len(uniques),
        "concepts": len(concepts),
        **term_counts,
        **concept_counts,
        **relation_counts,
    }
    return IndexTables(concepts, terms, relations, counts, codes, pd.Index(uniques))
