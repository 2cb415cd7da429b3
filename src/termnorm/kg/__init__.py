"""Terminologies in, tables out: loaders for UMLS, OBO/HPO, ICD-10-CM, WHO ICD-10 and ICD-9
procedures (multilingual), MEDIC, TSV, BioSyn."""

from termnorm.kg.build import KGFormat, SourceSpec, build_kg, build_kg_to_dir
from termnorm.kg.graph import KnowledgeGraph
from termnorm.kg.icd9procs import Icd9ProcsOptions, load_icd9procs
from termnorm.kg.icd10who import Icd10WhoOptions, load_icd10who
from termnorm.kg.ids import id_key, namespaced
from termnorm.kg.records import Concept, LoadReport, Relation, Term
from termnorm.kg.split import holdout_relations

__all__ = [
    "Concept",
    "Icd9ProcsOptions",
    "Icd10WhoOptions",
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
    "load_icd9procs",
    "load_icd10who",
    "namespaced",
]
