"""Terminologies in, tables out: loaders for UMLS, OBO/HPO, ICD-10-CM, MEDIC, TSV, BioSyn."""

from termnorm.kg.build import KGFormat, SourceSpec, build_kg, build_kg_to_dir
from termnorm.kg.graph import KnowledgeGraph
from termnorm.kg.ids import id_key, namespaced
from termnorm.kg.records import Concept, LoadReport, Relation, Term
from termnorm.kg.split import holdout_relations

__all__ = [
    "Concept",
    "KGFormat",
    "KnowledgeGraph",
    "LoadReport",
    "Relation",
    "SourceSpec",
    "Term",
    "build_kg",
    "build_kg_to_dir",
    "holdout_relations",
    "id_key",
    "namespaced",
]
