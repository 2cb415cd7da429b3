"""Hold relation triplets out of a KG, so link prediction is measured on edges never trained on.

``holdout_relations(kg, test_fraction, seed)`` returns ``(train_kg, heldout)``: for every relation
label independently, ``round(test_fraction · n_label)`` of its triplets (seeded permutation, at
least one triplet of the label always stays in training) go to ``heldout``; concepts and terms are
unchanged, so the held-out tails stay searchable candidates. ``save_heldout`` writes the edges
as ``HELDOUT_FILE`` (the KG's relations schema) and ``load_heldout`` reads them back, checked.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from termnorm.errors import InputFormatError
from termnorm.io.tables import atomic_file
from termnorm.kg.graph import RELATIONS_SCHEMA, KnowledgeGraph

__all__ = ["HELDOUT_FILE", "holdout_relations", "load_heldout", "save_heldout"]

HELDOUT_FILE = "heldout_relations.parquet"


def holdout_relations(
    kg: KnowledgeGraph, test_fraction: float = 0.2, seed: int = 0
) -> tuple[KnowledgeGraph, pd.DataFrame]:
    """Split ``kg.relations`` per label into a training KG and held-out (head, relation, tail)."""
    if not 0.0 < test_fraction < 1.0:
        raise ValueError(f"test_fraction must be between 0 and 1 (exclusive), got {test_fraction}")
    if len(kg.relations) == 0:
        raise ValueError("the KG has no relations to hold out; build it from a source with edges")
    rng = np.random.default_rng(seed)
    test_rows: list[np.ndarray] = []
    for _, rows in kg.relations.groupby("relation", sort=True).indices.items():
        n_test = min(len(rows) - 1, round(test_fraction * len(rows)))
        if n_test > 0:
            test_rows.append(rng.permutation(rows)[:n_test])
    test_idx = np.sort(np.concatenate(test_rows)) if test_rows else np.array([], dtype=int)
    mask = np.zeros(len(kg.relations), dtype=bool)
    mask[test_idx] = True
    heldout = kg.relations[mask].reset_index(drop=True)
    train = KnowledgeGraph(
        concepts=kg.concepts,
        terms=kg.terms,
        relations=kg.relations[~mask].reset_index(drop=True),
        card={
            **kg.card,
            "holdout": {
                "test_fraction": test_fraction,
                "seed": seed,
                "heldout_relations": len(heldout),
                "parent_fingerprint": kg.fingerprint,
            },
        },
    )
    return train, heldout


def save_heldout(heldout: pd.DataFrame, folder: str | Path) -> Path:
    """Write held-out triplets to ``folder/HELDOUT_FILE`` (atomically); return the path."""
    path = Path(folder) / HELDOUT_FILE
    table = pa.Table.from_pandas(heldout, schema=RELATIONS_SCHEMA, preserve_index=False)
    with atomic_file(path) as tmp:
        pq.write_table(table, tmp)
    return path


def load_heldout(path: str | Path) -> pd.DataFrame:
    """Read triplets written by :func:`save_heldout`; a clear error if absent or malformed."""
    path = Path(path)
    if not path.is_file():
        raise InputFormatError(path, None, "no such file; write one with 'termnorm kg split'")
    triplets = pd.read_parquet(path)
    missing = {"head", "relation", "tail"} - set(triplets.columns)
    if missing:
        raise InputFormatError(path, None, f"missing columns {sorted(missing)}")
    return triplets
