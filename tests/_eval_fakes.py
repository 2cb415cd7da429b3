"""Test doubles for the evaluators: encoders whose vectors are chosen by the test, and
prediction files with the ranks a test chooses."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from termnorm.kg import KnowledgeGraph


class FakeEncoder:
    """``encode`` looks texts up in a table; unknown texts get a seeded random vector.

    ``calls`` records every batch of texts encoded, so tests can check what was read.
    """

    def __init__(
        self,
        table: Mapping[str, Sequence[float] | np.ndarray],
        dim: int | None = None,
        path: Path | None = None,
    ) -> None:
        self.table = {k: np.asarray(v, dtype=np.float32) for k, v in table.items()}
        self.dim = dim or len(next(iter(self.table.values())))
        self.path = path
        self.calls: list[list[str]] = []

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        rows = []
        for text in texts:
            if text in self.table:
                rows.append(self.table[text])
            else:
                seed = int(hashlib.sha256(text.encode()).hexdigest()[:8], 16)
                rows.append(np.random.default_rng(seed).normal(size=self.dim))
        return np.asarray(rows, dtype=np.float32).reshape(len(texts), self.dim)


def one_hot(i: int, dim: int, scale: float = 1.0) -> np.ndarray:
    """``scale`` times the i-th unit vector of length ``dim``."""
    v = np.zeros(dim, dtype=np.float32)
    v[i] = scale
    return v


def kg_from(
    concepts: Mapping[str, tuple[str, Sequence[str], Sequence[str]]],
    relations: Sequence[tuple[str, str, str]] = (),
) -> KnowledgeGraph:
    """KG from ``{id: (name, synonyms, types)}`` and ``(head, relation, tail)`` rows."""
    c_rows, t_rows = [], []
    for cid, (name, syns, types) in concepts.items():
        c_rows.append(
            {"concept_id": cid, "name": name, "semantic_types": list(types), "alt_ids": []}
        )
        t_rows.append({"concept_id": cid, "term": name, "is_preferred": True})
        t_rows += [{"concept_id": cid, "term": s, "is_preferred": False} for s in syns]
    rel_rows = [{"head": h, "relation": r, "tail": t} for h, r, t in relations]
    return KnowledgeGraph.from_records(c_rows, t_rows, rel_rows)


def prediction_row(i: int | str, rank: int | None, kind: str = "simple", top: int = 5) -> dict:
    """A prediction record of mention ``m{i}`` (file ``doc``, line ``i``) whose first correct
    candidate is at ``rank`` among ``top`` listed."""
    return {
        "text": f"m{i}",
        "kind": kind,
        "location": f"/data/set/doc:{i}",
        "start": 0,
        "end": 5,
        "correct_at_1": rank == 1,
        "rank": rank,
        "predictions": [{"concept_id": f"C{j}"} for j in range(top)],
    }


def write_prediction_file(path: Path, ranks: list[int | None], top: int = 5) -> Path:
    """A predictions file: one simple mention per rank, then one composite mention."""
    rows = [prediction_row(i, rank, top=top) for i, rank in enumerate(ranks)]
    rows.append(prediction_row("x", None, kind="composite", top=top))
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path
