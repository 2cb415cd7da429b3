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
    from termnorm.kge.scoring import KGETailScorer
    from termnorm.kge.split import TripleSplit, kg_triples, split_triples
    from termnorm.kge.train import KGEEvaluator, link_prediction_metrics, real_vectors, train_kge
    from termnorm.kge.vectors import KGEVectors, unit_rows

_NAMES = {  # module: the names it gives
    "config": "FIELD_HELP KGEConfig KGEModelKind",
    "embedders": "ConceptIdEmbedder TermEmbedder kg_named_by_id term_key",
    "folder": "CARD_NAME check_kg load_kge load_split read_kge_card save_kge",
    "scoring": "KGETailScorer",
    "split": "TripleSplit kg_triples split_triples",
    "train": "KGEEvaluator link_prediction_metrics real_vectors train_kge",
    "vectors": "KGEVectors unit_rows",
}
__getattr__ = lazy_getattr(__name__, {n: m for m, names in _NAMES.items() for n in names.split()})
