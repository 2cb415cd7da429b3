"""Knowledge-graph embeddings (PyKEEN) of a KG's relation table: training, folders, lookups.

Names resolve lazily, so importing a light submodule (``termnorm.kge.config`` for the CLI's
help texts) does not load pandas, pyarrow or PyKEEN.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from termnorm._lazy import lazy_getattr

__all__ = [
    "CARD_NAME",
    "FIELD_HELP",
    "ConceptIdEmbedder",
    "KGEConfig",
    "KGEEvaluator",
    "KGEModelKind",
    "KGETailScorer",
    "KGEVectors",
    "TermEmbedder",
    "TripleSplit",
    "check_kg",
    "kg_named_by_id",
    "kg_triples",
    "link_prediction_metrics",
    "load_kge",
    "load_split",
    "read_kge_card",
    "real_vectors",
    "save_kge",
    "split_triples",
    "term_key",
    "train_kge",
    "unit_rows",
]

_WHERE = {
    "FIELD_HELP": "config",
    "KGEConfig": "config",
    "KGEModelKind": "config",
    "ConceptIdEmbedder": "embedders",
    "TermEmbedder": "embedders",
    "kg_named_by_id": "embedders",
    "term_key": "embedders",
    "CARD_NAME": "folder",
    "check_kg": "folder",
    "load_kge": "folder",
    "load_split": "folder",
    "read_kge_card": "folder",
    "KGETailScorer": "scoring",
    "save_kge": "folder",
    "link_prediction_metrics": "metrics",
    "TripleSplit": "split",
    "kg_triples": "split",
    "split_triples": "split",
    "KGEEvaluator": "train",
    "real_vectors": "train",
    "train_kge": "train",
    "KGEVectors": "vectors",
    "unit_rows": "vectors",
}

if TYPE_CHECKING:  # pragma: no cover
    from termnorm.kge.config import FIELD_HELP, KGEConfig, KGEModelKind
    from termnorm.kge.embedders import ConceptIdEmbedder, TermEmbedder, kg_named_by_id, term_key
    from termnorm.kge.folder import (
        CARD_NAME,
        check_kg,
        load_kge,
        load_split,
        read_kge_card,
        save_kge,
    )
    from termnorm.kge.metrics import link_prediction_metrics
    from termnorm.kge.scoring import KGETailScorer
    from termnorm.kge.split import TripleSplit, kg_triples, split_triples
    from termnorm.kge.train import KGEEvaluator, real_vectors, train_kge
    from termnorm.kge.vectors import KGEVectors, unit_rows

__getattr__ = lazy_getattr(__name__, _WHERE)
