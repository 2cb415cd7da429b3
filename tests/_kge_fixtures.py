"""A KG big enough for the KGE split (90/4/6 with coverage): 3 typed clusters of 12 concepts."""

from __future__ import annotations

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
