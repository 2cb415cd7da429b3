"""A KG big enough for the KGE split (90/4/6 with coverage): 3 typed clusters of 12 concepts."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

import numpy as np

from termnorm.kg import KnowledgeGraph

TYPES = ("cardio", "lung", "skin")


def make_cluster_kg(seed: int = 0) -> KnowledgeGraph:
    """36 concepts (C:t:i), each cluster a star (is_a to its root) plus random
    ``associated_with`` edges inside the cluster; about 160 distinct triples."""
    rng = np.random.default_rng(seed)
    concepts, terms, relations = [], [], []
    for t in TYPES:
        ids = [f"C:{t}:{i:02d}" for i in range(12)]
        for i, cid in enumerate(ids):
            name = f"{t} disorder {i}"
            concepts.append({"concept_id": cid, "name": name, "semantic_types": [t]})
            terms.append({"concept_id": cid, "term": name, "is_preferred": True})
            terms.append({"concept_id": cid, "term": f"{t} problem {i}"})
            if i > 0:
                relations.append({"head": cid, "relation": "is_a", "tail": ids[0]})
        for _ in range(45):
            h, tail = rng.choice(len(ids), size=2, replace=False)
            relations.append(
                {"head": ids[int(h)], "relation": "associated_with", "tail": ids[int(tail)]}
            )
    return KnowledgeGraph.from_records(concepts, terms, relations)


def save_cluster_kg(folder: Path, seed: int = 0) -> Path:
    """:func:`make_cluster_kg` saved as a KG folder."""
    return make_cluster_kg(seed).save(folder, card={"sources": [{"format": "fixture"}]})


def make_chain_kg(chains: int = 10, length: int = 12) -> KnowledgeGraph:
    """``chains`` chains of ``length`` concepts (C:c:i) linked by ``next`` (i → i+1) and its
    inverse ``prev`` (i+1 → i): every held-out edge is learnable from its inverse, which
    training holds unless the split drew both. 120 concepts and 220 triples by default."""
    concepts, terms, relations = [], [], []
    for c in range(chains):
        ids = [f"C:{c:02d}:{i:02d}" for i in range(length)]
        for i, cid in enumerate(ids):
            name = f"chain {c} link {i}"
            concepts.append({"concept_id": cid, "name": name, "semantic_types": [f"chain{c}"]})
            terms.append({"concept_id": cid, "term": name, "is_preferred": True})
        for a, b in pairwise(ids):
            relations.append({"head": a, "relation": "next", "tail": b})
            relations.append({"head": b, "relation": "prev", "tail": a})
    return KnowledgeGraph.from_records(concepts, terms, relations)


def save_chain_kg(folder: Path) -> Path:
    """:func:`make_chain_kg` saved as a KG folder."""
    return make_chain_kg().save(folder, card={"sources": [{"format": "fixture"}]})


def make_tree_kg(chapters: int = 4, blocks: int = 3, leaves: int = 10) -> KnowledgeGraph:
    """A plain ``is_a`` tree as ``kg build --format icd10who`` gives: a root, ``chapters``
    chapters of ``blocks`` blocks of ``leaves`` leaves. Every leaf hangs on one edge, so the
    coverage split cannot hold out any leaf edge. 136 triples by default, 120 of them leaves'."""
    concepts, terms, relations = [], [], []

    def add(cid: str, parent: str | None) -> None:
        concepts.append({"concept_id": cid, "name": f"node {cid}", "semantic_types": ["node"]})
        terms.append({"concept_id": cid, "term": f"node {cid}", "is_preferred": True})
        if parent is not None:
            relations.append({"head": cid, "relation": "is_a", "tail": parent})

    add("T:root", None)
    for c in range(chapters):
        add(f"T:{c}", "T:root")
        for b in range(blocks):
            add(f"T:{c}.{b}", f"T:{c}")
            for leaf in range(leaves):
                add(f"T:{c}.{b}.{leaf}", f"T:{c}.{b}")
    return KnowledgeGraph.from_records(concepts, terms, relations)
