"""An index built from vectors chosen so the right search answer is known in advance, and an
encoder that looks texts up and records calls.

Ontology (3 concepts): X:1 "alpha" (1,0,0) and "alpha two" (0.8,0.6,0); X:2 "beta" (0,1,0);
X:3 "gamma" (0,0,1), alt ID OTHER:33. The domain synonym "dx" of X:2 sits at (0.6,0,0.8), near
gamma, so it changes the answer for the query "q_dx" (equal to it) but not for "q_gamma"
(cos 0.8). Semantic types: X:1 and X:2 "Finding", X:3 "Disease"; terms come from source
"SRC" and each name is preferred.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from _index_fakes import KeyedEncoder
from termnorm.index import TermIndex
from termnorm.kg import KnowledgeGraph
from termnorm.search.domain import SearchSpace


def unit(*xs: float) -> np.ndarray:
    v = np.asarray(xs, dtype=np.float32)
    return v / np.linalg.norm(v)


class DictEncoder(KeyedEncoder):
    """Encodes from a fixed table (the index's encoder: same fingerprint) and records calls."""

    def __init__(self, table: Mapping[str, np.ndarray], fingerprint: str = "dict-1") -> None:
        super().__init__(dict(table), fingerprint)


ONTOLOGY = [  # (concept, text, vector)
    ("X:1", "alpha", unit(1, 0, 0)),
    ("X:1", "alpha two", unit(0.8, 0.6, 0)),
    ("X:2", "beta", unit(0, 1, 0)),
    ("X:3", "gamma", unit(0, 0, 1)),
]
NAMES = {"X:1": "alpha", "X:2": "beta", "X:3": "gamma"}
TYPES = {"X:1": ["Finding"], "X:2": ["Finding"], "X:3": ["Disease"]}
DOMAIN_TEXT = "dx"  # a domain synonym of X:2 that sits near gamma
TABLE = {
    **{text: vec for _c, text, vec in ONTOLOGY},
    DOMAIN_TEXT: unit(0.6, 0, 0.8),
    "q_dx": unit(0.6, 0, 0.8),
    "q_gamma": unit(0, 0, 1),
    "q_alpha": unit(0.99, 0.1, 0),
    "d2": unit(0, 1, 0.1),
}


def build_index(
    concepts: Sequence[tuple[str, str, Sequence[str], Sequence[str]]],
    terms: Sequence[tuple[str, str]],
    encoder: DictEncoder,
    backend: str = "exact",
) -> TermIndex:
    """An index of ``(concept_id, name, types, alt_ids)`` concepts and ``(concept_id, term)``
    terms (a term equal to its concept's name is preferred), encoded with ``encoder``."""
    names = {cid: name for cid, name, _t, _a in concepts}
    kg = KnowledgeGraph.from_records(
        [
            {"concept_id": c, "name": n, "semantic_types": list(t), "alt_ids": list(a)}
            for c, n, t, a in concepts
        ],
        [
            {"concept_id": c, "term": t, "source": "SRC", "is_preferred": t == names[c]}
            for c, t in terms
        ],
    )
    return TermIndex.build(kg, encoder, backend=backend, show_progress=False)


def make_index(encoder: DictEncoder | None = None, backend: str = "exact") -> TermIndex:
    """The index of the module docstring."""
    concepts = [
        (c, NAMES[c], TYPES[c], ["OTHER:33"] if c == "X:3" else []) for c in ("X:1", "X:2", "X:3")
    ]
    terms = [(c, t) for c, t, _v in ONTOLOGY]
    return build_index(concepts, terms, encoder or DictEncoder(TABLE), backend)


def make_space(encoder: DictEncoder | None = None) -> SearchSpace:
    """A space over :func:`make_index` (no domain synonyms yet)."""
    encoder = encoder or DictEncoder(TABLE)
    return SearchSpace(make_index(encoder), encoder)
