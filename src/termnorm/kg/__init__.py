"""Terminologies in, tables out: loaders for UMLS, OBO/HPO, ICD-10-CM, MEDIC, TSV, BioSyn."""

from termnorm.kg.graph import KnowledgeGraph
from termnorm.kg.ids import id_key, namespaced
from termnorm.kg.records import Concept, LoadReport, Relation, Term

__all__ = ["Concept", "KnowledgeGraph", "LoadReport", "Relation", "Term", "id_key", "namespaced"]
