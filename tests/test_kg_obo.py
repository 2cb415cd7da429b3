"""OBO parser and loader, HPO annotations, on the 21-term hp.obo fixture and a .hpoa excerpt.

The fixture has 1 obsolete term, 18 synonyms (2 BROAD, 2 NARROW, 1 case-duplicate of its
name), 21 is_a lines between live terms plus one to the obsolete term, one
``relationship: part_of`` inside the file and one to an UBERON term outside it. The .hpoa
excerpt has 15 rows: 1 DECIPHER, 1 NOT, 1 repeated pair, 1 edge to the obsolete term.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from termnorm.errors import InputFormatError
from termnorm.kg import Concept, LoadReport, Relation, Term
from termnorm.kg.hpo import HpoOptions, load_hpo
from termnorm.kg.obo import OboOptions, load_obo, semantic_types
from termnorm.kg.obo_parser import parse_obo, strip_trailers

HPO_DIR = Path(__file__).parent / "fixtures" / "kg" / "hpo"
OBO = HPO_DIR / "hp.obo"


def _obo(**options: object) -> tuple[list[object], LoadReport]:
    report = LoadReport("obo")
    return list(load_obo(OBO, report, OboOptions(**options))), report  # type: ignore[arg-type]


def _of(records: list[object], kind: type) -> list:
    return [r for r in records if isinstance(r, kind)]


def test_parser_reads_tags_scopes_and_escapes() -> None:
    doc = parse_obo(OBO)
    assert doc.header["ontology"] == ["hp"]
    assert len(doc.terms) == 21 and list(doc.typedefs) == ["part_of"]
    seizure = doc.terms["HP:0001250"]
    assert seizure.alt_ids == ["HP:0002279"]
    assert seizure.xrefs == ["UMLS:C0036572", "SNOMEDCT_US:91175000"]
    assert ("Fits", "BROAD") in seizure.synonyms
    gtcs = doc.terms["HP:0002069"]
    assert ('Generalized "tonic-clonic" seizure', "NARROW") in gtcs.synonyms
    assert gtcs.is_a == ["HP:0001250"]  # {modifier} and ! comment removed
    assert doc.terms["HP:0000000"].obsolete


def test_strip_trailers_respects_quotes() -> None:
    assert strip_trailers('"a ! b {c}" EXACT [] ! note') == '"a ! b {c}" EXACT []'
    assert strip_trailers("HP:1 {source=x} ! name") == "HP:1"


def test_loader_counts() -> None:
    records, report = _obo()
    assert report.read["terms"] == 21
    assert report.dropped["concept: obsolete"] == 1
    assert len(_of(records, Concept)) == report.kept["concepts"] == 20
    assert report.read["synonyms"] == 18
    assert report.dropped["term: synonym scope BROAD not selected"] == 2
    assert report.dropped["term: synonym scope NARROW not selected"] == 2
    assert report.dropped["term: duplicate (case-insensitive)"] == 1
    assert len(_of(records, Term)) == report.kept["terms"] == 20 + 13
    assert report.read["edges"] == 23
    assert len(_of(records, Relation)) == report.kept["relations"] == 21
    assert report.dropped["relation: endpoint obsolete or unnamed"] == 1
    assert report.dropped["relation: endpoint not in file"] == 1
    assert report.info["data-version"] == "hp/releases/2025-01-16-mini"


def test_concepts_terms_relations() -> None:
    records, _ = _obo()
    concepts = {c.concept_id: c for c in _of(records, Concept)}
    assert "HP:0000000" not in concepts
    assert concepts["HP:0001250"].alt_ids == ("HP:0002279", "UMLS:C0036572", "SNOMEDCT_US:91175000")
    terms = [t.term for t in _of(records, Term) if t.concept_id == "HP:0001250"]
    assert terms == ["Seizure", "Seizures", "Epileptic seizure"]
    triples = {(r.head, r.relation, r.tail) for r in _of(records, Relation)}
    assert ("HP:0001631", "part_of", "HP:0001627") in triples
    assert ("HP:0002069", "is_a", "HP:0001250") in triples


def test_synonym_scopes_option() -> None:
    records, report = _obo(synonym_scopes=("EXACT", "RELATED", "BROAD", "NARROW"))
    assert not any("scope" in k for k in report.dropped)
    assert "Fits" in {t.term for t in _of(records, Term)}
    with pytest.raises(ValueError, match=r"unknown synonym scope.*known: EXACT, RELATED"):
        _obo(synonym_scopes=("EXACTLY",))


def test_semantic_types_are_hpo_branches() -> None:
    records, _ = _obo()
    types = {c.concept_id: c.semantic_types for c in _of(records, Concept)}
    assert types["HP:0001250"] == ("Abnormality of the nervous system",)
    assert types["HP:0011003"] == ("Abnormality of the eye", "Abnormality of the nervous system")
    assert types["HP:0004322"] == ("Growth abnormality",)
    assert types["HP:0000006"] == ("Mode of inheritance",)  # outside HP:0000118
    assert types["HP:0000001"] == () and types["HP:0000118"] == ()


def test_semantic_types_from_roots_without_type_root() -> None:
    live = {k: v for k, v in parse_obo(OBO).terms.items() if not v.obsolete}
    types = semantic_types(live, type_root="")
    assert types["HP:0001250"] == ("Phenotypic abnormality",)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[Term]\nid: X:1\nname x\n", r"bad\.obo:3: expected 'tag: value'"),
        ("[Term]\nid: X:1\nsynonym: no quotes EXACT []\n", r"bad\.obo:3: expected a quoted text"),
        ('[Term]\nid: X:1\nsynonym: "open EXACT []\n', r"bad\.obo:3: unterminated"),
        ("[Term]\nname: x\n", r"bad\.obo:2: 'name:' before the stanza's 'id:'"),
        ("[Term]\nid: X:1\nrelationship: part_of\n", r"bad\.obo:3: 'relationship:' needs"),
    ],
)
def test_malformed_obo(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.obo"
    path.write_text(text)
    with pytest.raises(InputFormatError, match=message):
        _obo_at(path)


def _obo_at(path: Path) -> list[object]:
    return list(load_obo(path, LoadReport("obo")))


def test_obo_without_prefix_or_name(tmp_path: Path) -> None:
    path = tmp_path / "toy.obo"
    path.write_text(
        "ontology: toy\n\n[Term]\nid: 1\nname: root\n\n[Term]\nid: 2\nname: child\n"
        'exact_synonym: "kid" []\nis_a: 1\n\n[Term]\nid: 3\n'
    )
    report = LoadReport("toy")
    records = list(load_obo(path, report))
    assert [c.concept_id for c in _of(records, Concept)] == ["TOY:1", "TOY:2"]
    assert report.dropped["concept: no name"] == 1
    assert "kid" in {t.term for t in _of(records, Term)}
    assert _of(records, Relation) == [Relation("TOY:2", "is_a", "TOY:1")]


def test_hpo_with_annotations() -> None:
    report = LoadReport("hpo")
    records = list(load_hpo(HPO_DIR, report))
    diseases = [c for c in _of(records, Concept) if not c.concept_id.startswith("HP:")]
    assert [c.concept_id for c in diseases] == [
        "OMIM:607208",
        "OMIM:108800",
        "ORPHA:33069",
        "ORPHA:3346",
        "OMIM:157300",
    ]
    assert diseases[0].name == "Dravet syndrome" and diseases[0].semantic_types == ("Disease",)
    assert report.read["annotations"] == 15
    assert report.dropped["annotation: database not selected"] == 1
    assert report.dropped["annotation: NOT qualifier"] == 1
    assert report.dropped["annotation: repeated disease-phenotype pair"] == 1
    edges = [r for r in _of(records, Relation) if r.relation == "has_phenotype"]
    assert len(edges) == 12  # the edge to obsolete HP:0000000 is dropped by build_kg
    assert Relation("OMIM:108800", "has_phenotype", "HP:0001631") in edges


def test_hpo_options() -> None:
    report = LoadReport("hpo")
    records = list(load_hpo(OBO, report, HpoOptions(with_annotations=False)))
    assert all(c.concept_id.startswith("HP:") for c in _of(records, Concept))
    report = LoadReport("hpo")
    options = HpoOptions(databases=("OMIM", "ORPHA", "DECIPHER"))
    records = list(load_hpo(OBO, report, options))
    assert "DECIPHER:1" in {c.concept_id for c in _of(records, Concept)}


def test_hpo_missing_annotations(tmp_path: Path) -> None:
    (tmp_path / "hp.obo").write_text(OBO.read_text())
    with pytest.raises(InputFormatError, match=r"annotation file not found.*--no-annotations"):
        list(load_hpo(tmp_path, LoadReport("hpo")))


def test_malformed_hpoa(tmp_path: Path) -> None:
    (tmp_path / "hp.obo").write_text(OBO.read_text())
    (tmp_path / "phenotype.hpoa").write_text("#version: x\nOMIM:1\tname\t\tHP:0000001\n")
    with pytest.raises(InputFormatError, match=r"phenotype\.hpoa:2: expected 12 tab-separated"):
        list(load_hpo(tmp_path, LoadReport("hpo")))


# HP terms some OMIM/ORPHA disease has (NOT rows and DECIPHER left out), plus is_a ancestors
USED = {
    "HP:0000001", "HP:0000118", "HP:0000005", "HP:0000006", "HP:0000707", "HP:0001626",
    "HP:0000478", "HP:0012638", "HP:0001250", "HP:0002069", "HP:0001263", "HP:0001627",
    "HP:0001631", "HP:0000505", "HP:0011003", "HP:0002315", "HP:0000622",
}  # fmt: skip


def test_hpo_used_only_keeps_annotated_terms_and_ancestors() -> None:
    report = LoadReport("hpo")
    options = HpoOptions(with_annotations=False, used_only=True)
    records = list(load_hpo(HPO_DIR, report, options))
    kept = {c.concept_id for c in _of(records, Concept)}
    assert kept == USED  # Blindness, Growth abnormality and Short stature are left out
    assert report.dropped["concept: outside the selected subset"] == 3
    assert report.read["annotations"] == 0  # read for the subset, not counted as the KG's
    edges = _of(records, Relation)
    assert all(r.head in USED and r.tail in USED for r in edges)
    assert Relation("HP:0011003", "is_a", "HP:0012638") in edges
    assert Relation("HP:0001631", "part_of", "HP:0001627") in edges
    assert {t.concept_id for t in _of(records, Term)} == USED


def test_hpo_used_only_with_annotations_and_databases() -> None:
    report = LoadReport("hpo")
    records = list(load_hpo(HPO_DIR, report, HpoOptions(used_only=True)))
    concepts = {c.concept_id for c in _of(records, Concept)}
    assert concepts == USED | {
        "OMIM:607208",
        "OMIM:108800",
        "ORPHA:33069",
        "ORPHA:3346",
        "OMIM:157300",
    }
    assert report.read["annotations"] == 15  # counted once
    decipher = HpoOptions(with_annotations=False, used_only=True, databases=("DECIPHER",))
    records = list(load_hpo(HPO_DIR, LoadReport("hpo"), decipher))
    assert {c.concept_id for c in _of(records, Concept)} == {
        "HP:0004322",
        "HP:0001507",
        "HP:0000118",
        "HP:0000001",
    }


def test_hpo_used_only_errors(tmp_path: Path) -> None:
    nothing = HpoOptions(used_only=True, with_annotations=False, databases=("MONDO",))
    with pytest.raises(InputFormatError, match="no annotation of the selected databases"):
        list(load_hpo(HPO_DIR, LoadReport("hpo"), nothing))
    (tmp_path / "hp.obo").write_text(OBO.read_text())
    no_file = HpoOptions(used_only=True, with_annotations=False)
    with pytest.raises(InputFormatError, match=r"annotation file not found.*drop used_only"):
        list(load_hpo(tmp_path, LoadReport("hpo"), no_file))


def test_obo_subset_drops_edges_to_left_out_terms(tmp_path: Path) -> None:
    obo = tmp_path / "toy.obo"
    obo.write_text(
        "ontology: toy\n\n[Term]\nid: TOY:1\nname: root\n\n"
        "[Term]\nid: TOY:2\nname: kept\nis_a: TOY:1\nrelationship: part_of TOY:3\n\n"
        "[Term]\nid: TOY:3\nname: other\nis_a: TOY:1\n"
    )
    report = LoadReport("obo")
    records = list(load_obo(obo, report, subset=frozenset({"TOY:2"})))
    assert [c.concept_id for c in _of(records, Concept)] == ["TOY:1", "TOY:2"]
    assert _of(records, Relation) == [Relation("TOY:2", "is_a", "TOY:1")]
    assert report.dropped["relation: endpoint outside the selected subset"] == 1
    assert report.dropped["concept: outside the selected subset"] == 1
