"""Terminologies in, tables out: loaders for UMLS, OBO/HPO, ICD-10-CM, WHO ICD-10 and ICD-9
procedures (multilingual), every GNU Health catalogue (parallel terms), MEDIC, TSV, BioSyn,
OMOP (Athena), SNOMED CT (RF2) and LOINC.

The formats are one registry, :data:`termnorm.kg.formats.FORMATS`. Names resolve lazily, so
the CLI can read it at start-up without loading pandas.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from termnorm._lazy import lazy_getattr

if TYPE_CHECKING:  # pragma: no cover
    from termnorm.kg.build import SourceSpec, build_kg, build_kg_to_dir
    from termnorm.kg.formats import KGFormat
    from termnorm.kg.gnuhealth import GnuHealthOptions, load_gnuhealth
    from termnorm.kg.graph import KnowledgeGraph
    from termnorm.kg.icd9procs import Icd9ProcsOptions, load_icd9procs
    from termnorm.kg.icd10who import Icd10WhoOptions, load_icd10who
    from termnorm.kg.ids import id_key, namespaced
    from termnorm.kg.records import Concept, LoadReport, Relation, Term
    from termnorm.kg.split import holdout_relations

__all__ = [
    "Concept",
    "GnuHealthOptions",
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
    "load_gnuhealth",
    "load_icd9procs",
    "load_icd10who",
    "namespaced",
]

_NAMES = {  # module: the names it gives
    "build": "SourceSpec build_kg build_kg_to_dir",
    "formats": "KGFormat",
    "gnuhealth": "GnuHealthOptions load_gnuhealth",
    "graph": "KnowledgeGraph",
    "icd10who": "Icd10WhoOptions load_icd10who",
    "icd9procs": "Icd9ProcsOptions load_icd9procs",
    "ids": "id_key namespaced",
    "records": "Concept LoadReport Relation Term",
    "split": "holdout_relations",
}
__getattr__ = lazy_getattr(__name__, {n: m for m, names in _NAMES.items() for n in names.split()})
