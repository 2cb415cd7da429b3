"""KGE folders: vectors, id tables, PyKEEN parameters and a card, written atomically.

On disk::

    entity_vectors.npy     float32 [n_entities, d]  (real view, see termnorm.kge.vectors)
    relation_vectors.npy   float32 [n_relations, d_r]
    entities.parquet       entity_id (row of entity_vectors), concept_id
    relations.parquet      relation_id (row of relation_vectors), relation
    triples.parquet        head, relation, tail, part (train / valid / test: the split used)
    pykeen_model.pt        the PyKEEN model's state_dict (torch.save)
    kge.json               model, settings, KG fingerprint, split sizes, metrics, versions

:func:`load_kge` reads the vectors back (PyKEEN is not needed for that) and, given the KG,
refuses one whose fingerprint differs from the one the KGE was trained on.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from termnorm._artifacts import atomic_dir, read_versioned_card, write_card
from termnorm.errors import ArtifactMismatchError
from termnorm.kg import KnowledgeGraph
from termnorm.kge.vectors import KGEVectors

__all__ = [
    "CARD_NAME",
    "ENTITIES_FILE",
    "ENTITY_VECTORS_FILE",
    "FORMAT_VERSION",
    "PARAMS_FILE",
    "RELATIONS_FILE",
    "RELATION_VECTORS_FILE",
    "TRIPLES_FILE",
    "check_kg",
    "load_kge",
    "load_split",
    "read_kge_card",
    "save_kge",
]

CARD_NAME = "kge.json"
FORMAT_VERSION = 1
ENTITY_VECTORS_FILE = "entity_vectors.npy"
RELATION_VECTORS_FILE = "relation_vectors.npy"
ENTITIES_FILE = "entities.parquet"
RELATIONS_FILE = "relations.parquet"
TRIPLES_FILE = "triples.parquet"
PARAMS_FILE = "pykeen_model.pt"


def save_kge(
    out: str | Path,
    kge: KGEVectors,
    triples: pd.DataFrame,
    write_params: Any,
) -> Path:
    """Write a KGE folder atomically; ``write_params(path)`` writes the model parameters.

    ``kge.card`` becomes ``kge.json`` (with ``format_version`` set).
    """
    out = Path(out)
    with atomic_dir(out) as tmp:
        np.save(tmp / ENTITY_VECTORS_FILE, np.asarray(kge.vectors, dtype=np.float32))
        np.save(tmp / RELATION_VECTORS_FILE, np.asarray(kge.relation_vectors, dtype=np.float32))
        entities = pa.table(
            {
                "entity_id": pa.array(range(len(kge.concept_ids)), pa.int64()),
                "concept_id": pa.array(kge.concept_ids, pa.string()),
            }
        )
        relations = pa.table(
            {
                "relation_id": pa.array(range(len(kge.relation_labels)), pa.int64()),
                "relation": pa.array(kge.relation_labels, pa.string()),
            }
        )
        pq.write_table(entities, tmp / ENTITIES_FILE)
        pq.write_table(relations, tmp / RELATIONS_FILE)
        pq.write_table(pa.Table.from_pandas(triples, preserve_index=False), tmp / TRIPLES_FILE)
        write_params(tmp / PARAMS_FILE)
        kge.card["format_version"] = FORMAT_VERSION
        write_card(tmp, CARD_NAME, kge.card)
    return out


def read_kge_card(folder: str | Path) -> dict[str, Any]:
    """The card of a KGE folder; :class:`ArtifactMismatchError` when it is not one (or of
    another format version)."""
    make = "termnorm kge train --kg KG --model transe --out KGE"
    return read_versioned_card(Path(folder), CARD_NAME, "kge", "KGE", FORMAT_VERSION, make)


def check_kg(card: dict[str, Any], kg: KnowledgeGraph, folder: str | Path) -> None:
    """``ArtifactMismatchError`` unless ``kg`` is the KG the KGE in ``folder`` was trained on."""
    trained = card.get("kg", {}).get("fingerprint")
    if kg.fingerprint != trained:
        model = card.get("config", {}).get("model", "MODEL")
        raise ArtifactMismatchError(
            f"the KGE in {folder} was trained on the KG with fingerprint {trained} "
            f"({card.get('kg', {}).get('path')}), this KG has {kg.fingerprint or 'none (unsaved)'}"
            f"; pass that KG, or retrain: termnorm kge train --kg KG --model {model} --out {folder}"
        )


def load_kge(folder: str | Path, kg: KnowledgeGraph | None = None) -> KGEVectors:
    """Read a KGE folder; with ``kg``, refuse it unless it is the KG the KGE was trained on."""
    folder = Path(folder)
    card = read_kge_card(folder)
    if kg is not None:
        check_kg(card, kg, folder)
    entities = pq.read_table(folder / ENTITIES_FILE).to_pandas()
    relations = pq.read_table(folder / RELATIONS_FILE).to_pandas()
    return KGEVectors(
        concept_ids=[str(c) for c in entities.sort_values("entity_id")["concept_id"]],
        vectors=np.load(folder / ENTITY_VECTORS_FILE),
        relation_labels=[str(r) for r in relations.sort_values("relation_id")["relation"]],
        relation_vectors=np.load(folder / RELATION_VECTORS_FILE),
        card=card,
    )


def load_split(folder: str | Path) -> pd.DataFrame:
    """The ``head, relation, tail, part`` triples of the split a KGE was trained and tested on."""
    folder = Path(folder)
    read_kge_card(folder)
    return pq.read_table(folder / TRIPLES_FILE).to_pandas()
