"""Vectors built so the right search answer is known in advance, and an encoder that records calls.

Ontology (3 concepts): X:1 "alpha" (1,0,0) and "alpha two" (0.8,0.6,0); X:2 "beta" (0,1,0);
X:3 "gamma" (0,0,1). The domain synonym "dx" of X:2 sits at (0.6,0,0.8), near gamma, so it
changes the answer for the query "q_dx" (equal to it) but not for "q_gamma" (cos 0.8).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from termnorm.search.domain import SearchSpace, TextVectors


def unit(*xs: float) -> np.ndarray:
    v = np.asarray(xs, dtype=np.float32)
    return v / np.linalg.norm(v)


class DictEncoder:
    """Encodes from a fixed table and records every call."""

    def __init__(self, table: dict[str, np.ndarray]) -> None:
        self.table = table
        self.calls: list[list[str]] = []

    def encode(self, texts: Sequence[str], batch_size: int = 256) -> np.ndarray:
        self.calls.append(list(texts))
        return np.stack([self.table[t] for t in texts]).astype(np.float32)


ONTOLOGY = [  # (concept, text, vector)
    ("X:1", "alpha", unit(1, 0, 0)),
    ("X:1", "alpha two", unit(0.8, 0.6, 0)),
    ("X:2", "beta", unit(0, 1, 0)),
    ("X:3", "gamma", unit(0, 0, 1)),
]
DOMAIN_TEXT = "dx"  # a domain synonym of X:2 that sits near gamma
TABLE = {
    **{text: vec for _c, text, vec in ONTOLOGY},
    DOMAIN_TEXT: unit(0.6, 0, 0.8),
    "q_dx": unit(0.6, 0, 0.8),
    "q_gamma": unit(0, 0, 1),
    "q_alpha": unit(0.99, 0.1, 0),
    "d2": unit(0, 1, 0.1),
}


def make_space(encoder: DictEncoder | None = None) -> SearchSpace:
    onto = TextVectors(
        tuple(t for _c, t, _v in ONTOLOGY),
        tuple(c for c, _t, _v in ONTOLOGY),
        np.stack([v for _c, _t, v in ONTOLOGY]),
    )
    names = {"X:1": "alpha", "X:2": "beta", "X:3": "gamma"}
    return SearchSpace(onto, names, {"X:3": ["OTHER:33"]}, encoder or DictEncoder(TABLE))
