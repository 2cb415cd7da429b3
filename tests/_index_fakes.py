"""An index whose right answers are known in advance, and an encoder that looks vectors up.

Known KG (dimension 8, e_i the i-th basis vector):

* ``A:1`` "alpha disease": terms "alpha disease" e0, "alpha syndrome" unit(3, 1, 0...)
* ``B:2`` "beta disease": terms "beta disease" e1, "beta variant" unit(1, 3, 0...)
* ``C:3`` "gamma disease": term "gamma disease" e2, alt IDs ["OMIM:333"]
* ``Z:9`` and ``Z:1``: one term each, "zeta nine" / "zeta one", both exactly e3 (a tie;
  Z:9's term comes first in the table, Z:1 must still rank first).

Queries: "q alpha" = e0 (A:1 via "alpha disease", then B:2 via "beta variant" at cos 1/√10),
"q zeta" = e3 (tie Z:1, Z:9).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from termnorm.encoders import Pooling
from termnorm.kg import KnowledgeGraph

DIM = 8


def unit(*xs: float) -> np.ndarray:
    """A unit float32 vector of size :data:`DIM` from its leading coordinates."""
    v = np.zeros(DIM, dtype=np.float32)
    v[: len(xs)] = xs
    return v / np.linalg.norm(v)


def e(i: int) -> np.ndarray:
    """The ``i``-th basis vector."""
    v = np.zeros(DIM, dtype=np.float32)
    v[i] = 1.0
    return v


TABLE: dict[str, np.ndarray] = {
    "alpha disease": e(0),
    "alpha syndrome": unit(3, 1),
    "beta disease": e(1),
    "beta variant": unit(1, 3),
    "gamma disease": e(2),
    "zeta nine": e(3),
    "zeta one": e(3),
    "zeta": e(3),
    "q alpha": e(0),
    "q zeta": e(3),
}


class KeyedEncoder:
    """Encodes known strings from :data:`TABLE` (or ``table``), others to a seeded random unit
    vector; ``calls`` records every batch."""

    def __init__(
        self, table: dict[str, np.ndarray] | None = None, fingerprint: str = "keyed-1"
    ) -> None:
        self.table = TABLE if table is None else table
        self.fingerprint = fingerprint
        self.dimension = len(next(iter(self.table.values()))) if self.table else DIM
        self.path: Path | None = None
        self.pooling = Pooling.MEAN
        self.max_length = 32
        self.calls: list[list[str]] = []

    def encode(
        self,
        texts: Sequence[str],
        batch_size: int = 256,
        show_progress: bool = False,
        desc: str = "encoding",
        on_batch: Callable[[int], None] | None = None,
    ) -> np.ndarray:
        self.calls.append(list(texts))
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        for i, text in enumerate(texts):
            if text in self.table:
                out[i] = self.table[text]
            else:
                seed = int(hashlib.sha256(text.encode()).hexdigest()[:8], 16)
                v = np.random.default_rng(seed).standard_normal(self.dimension)
                v = v.astype(np.float32)
                out[i] = v / np.linalg.norm(v)
        for start in range(0, len(texts), batch_size):  # as a real encoder reports batches
            if on_batch is not None:
                on_batch(min(batch_size, len(texts) - start))
        return out


KNOWN = {  # concept_id: (name, terms, alt_ids)
    "A:1": ("alpha disease", ["alpha disease", "alpha syndrome"], []),
    "B:2": ("beta disease", ["beta disease", "beta variant"], []),
    "C:3": ("gamma disease", ["gamma disease"], ["OMIM:333"]),
    "Z:9": ("zeta nine", ["zeta nine"], []),
    "Z:1": ("zeta one", ["zeta one"], []),
}


def known_kg(extra_terms: Sequence[tuple[str, str]] = ()) -> KnowledgeGraph:
    """The KG of the module docstring (plus ``(concept_id, term)`` rows at the end)."""
    concepts = [
        {"concept_id": cid, "name": name, "semantic_types": [], "alt_ids": alts}
        for cid, (name, _terms, alts) in KNOWN.items()
    ]
    terms = [{"concept_id": cid, "term": t} for cid, (_n, ts, _a) in KNOWN.items() for t in ts]
    terms += [{"concept_id": cid, "term": t} for cid, t in extra_terms]
    return KnowledgeGraph.from_records(concepts, terms)
