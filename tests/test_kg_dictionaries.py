"""MEDIC (BioSyn and CTD layouts), TSV/CSV and BioSyn dictionaries (ICD-10-CM: test_kg_real_data).

Fixture counts by design: medic_biosyn.txt has 20 lines, one repeating an earlier ID, 52
names with one case-duplicate and one trailing empty field; ctd_diseases.tsv has 12 rows,
12 parent links and 33 names with one case-duplicate; dictionary.tsv has a header and 21
rows over 11 concepts with one duplicate; biosyn_dictionary.txt 21 lines over 15 concepts.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from termnorm.errors import InputFormatError
from termnorm.kg import Concept, LoadReport, Relation, Term
from termnorm.kg.medic import load_medic, medic_id
from termnorm.kg.tsv import TsvOptions, load_biosyn, load_tsv

FIXTURES = Path(__file__).parent / "fixtures" / "kg"


def _of(records: list[object], kind: type) -> list:
    return [r for r in records if isinstance(r, kind)]


def test_medic_biosyn_layout() -> None:
    report = LoadReport("medic")
    records = list(load_medic(FIXTURES / "medic" / "medic_biosyn.txt", report))
    concepts = {c.concept_id: c for c in _of(records, Concept)}
    assert report.read["lines"] == 20
    assert len(concepts) == report.kept["concepts"] == 19
    assert report.dropped["concept: repeated ID (first line kept)"] == 1
    assert len(_of(records, Term)) == report.kept["terms"] == 51
    assert report.dropped["term: duplicate (case-insensitive)"] == 1
    assert report.info["layout"] == "biosyn"
    assert concepts["MESH:C563363"].alt_ids == ("OMIM:609942", "OMIM:609943")
    assert concepts["OMIM:607208"].name == "DRAVET SYNDROME"
    assert concepts["MESH:C"].name == "Diseases"
    # an OMIM ID that is a MeSH concept's alt ID and also a concept of its own stays both
    assert "OMIM:260350" in concepts and concepts["MESH:D010190"].alt_ids == ("OMIM:260350",)
    assert concepts["MESH:D009203"].alt_ids == ("OMIM:608446",)  # "608446|D009203||…": MeSH first
    mi = [t.term for t in _of(records, Term) if t.concept_id == "MESH:D009203"]
    assert mi[0] == "Myocardial Infarction" and "MI" not in mi  # repeated line ignored
    assert _of(records, Relation) == []


def test_medic_ctd_layout() -> None:
    report = LoadReport("ctd")
    records = list(load_medic(FIXTURES / "medic" / "ctd_diseases.tsv", report))
    concepts = {c.concept_id: c for c in _of(records, Concept)}
    assert report.info["layout"] == "ctd"
    assert len(concepts) == 12
    assert len(_of(records, Term)) == 32
    assert report.dropped["term: duplicate (case-insensitive)"] == 1
    mi = concepts["MESH:D009203"]
    assert mi.semantic_types == ("Cardiovascular disease", "Pathology (anatomical condition)")
    assert concepts["MESH:D003924"].alt_ids == ("DO:DOID:9352", "OMIM:125853")
    relations = _of(records, Relation)
    assert len(relations) == 12
    assert Relation("MESH:D009203", "is_a", "MESH:D009336") in relations


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("D009203|Myocardial Infarction", r"bad\.txt:2: expected 'IDs\|\|name"),
        ("X123||Something", r"bad\.txt:2: not a MeSH or OMIM ID: 'X123'"),
        ("||Something", r"bad\.txt:2: no concept ID"),
    ],
)
def test_medic_malformed(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "bad.txt"
    path.write_text(f"D000001||Fine\n{line}\n")
    with pytest.raises(InputFormatError, match=message):
        list(load_medic(path, LoadReport("medic")))


def test_ctd_wrong_column_count(tmp_path: Path) -> None:
    path = tmp_path / "CTD_diseases.tsv"
    path.write_text("# Fields:\nName\tMESH:D1\textra\n")
    with pytest.raises(InputFormatError, match=r"CTD_diseases\.tsv:2: expected 8 or 9"):
        list(load_medic(path, LoadReport("ctd")))


def test_medic_id() -> None:
    assert medic_id("D003920") == "MESH:D003920"
    assert medic_id("222100") == "OMIM:222100"
    assert medic_id("OMIM:222100") == "OMIM:222100"


def test_tsv_dictionary() -> None:
    report = LoadReport("tsv")
    records = list(load_tsv(FIXTURES / "dict" / "dictionary.tsv", report))
    concepts = {c.concept_id: c for c in _of(records, Concept)}
    assert report.info["header"] == "skipped"
    assert report.read["rows"] == 21
    assert len(concepts) == 11
    assert "LOCAL:10019211" in concepts and "SNOMEDCT:22298006" in concepts
    terms = _of(records, Term)
    assert len(terms) == 20 and report.dropped["term: duplicate (case-insensitive)"] == 1
    headache = [(t.term, t.lang, t.is_preferred) for t in terms if t.concept_id == "LOCAL:10019211"]
    assert headache == [
        ("Headache", "en", True),
        ("head ache", "en", False),
        ("Kopfschmerz", "de", False),
        ("headaches", "en", False),
    ]


def test_csv_dictionary_with_quotes_and_prefix() -> None:
    report = LoadReport("csv")
    options = TsvOptions(prefix="UMLS")
    records = list(load_tsv(FIXTURES / "dict" / "dictionary.csv", report, options))
    terms = {(t.concept_id, t.term) for t in _of(records, Term)}
    assert ("UMLS:C0018681", "Pain, head") in terms
    assert len(_of(records, Concept)) == 4 and len(terms) == 6


def test_tsv_malformed_row(tmp_path: Path) -> None:
    path = tmp_path / "d.tsv"
    path.write_text("C1\tfine\nC2\ttoo\tmany\tcolumns\n")
    with pytest.raises(InputFormatError, match=r"d\.tsv:2: expected 'concept_id<TAB>term"):
        list(load_tsv(path, LoadReport("tsv")))


def test_biosyn_dictionary() -> None:
    report = LoadReport("biosyn")
    records = list(load_biosyn(FIXTURES / "dict" / "biosyn_dictionary.txt", report))
    concepts = {c.concept_id: c for c in _of(records, Concept)}
    assert len(concepts) == 15
    assert len(_of(records, Term)) == 20
    assert concepts["LOCAL:D003924"].alt_ids == ("LOCAL:C567755",)
    assert "OMIM:607208" in concepts
    assert concepts["LOCAL:D009203"].name == "Myocardial Infarction"


def test_biosyn_malformed(tmp_path: Path) -> None:
    path = tmp_path / "dict.txt"
    path.write_text("D1||ok\nD2|name only\n")
    with pytest.raises(InputFormatError, match=r"dict\.txt:2: expected 'ID\|\|name'"):
        list(load_biosyn(path, LoadReport("biosyn")))


def test_medic_html_entities_decoded(tmp_path: Path) -> None:
    path = tmp_path / "medic.txt"
    path.write_text(
        "D000544||Alzheimer&apos;s Disease|Alzheimer Disease\n"
        "D007721||Kienb&#246;ck Disease|Kienbock&apos;s disease|Kienbock Disease\n"
        "D003920||Diabetes Mellitus\n"
    )
    report = LoadReport("medic")
    records = list(load_medic(path, report))
    terms = [t.term for t in _of(records, Term)]
    assert terms == [
        "Alzheimer's Disease",
        "Alzheimer Disease",
        "Kienböck Disease",
        "Kienbock's disease",
        "Kienbock Disease",
        "Diabetes Mellitus",
    ]
    assert _of(records, Concept)[1].name == "Kienböck Disease"
    assert report.notes["lines with HTML entities (decoded)"] == 2


def test_biosyn_html_entities_decoded(tmp_path: Path) -> None:
    path = tmp_path / "dictionary.txt"
    path.write_text("D000544||alzheimer&apos;s disease\nD000544||alzheimer disease\n")
    report = LoadReport("biosyn")
    terms = [t.term for t in _of(list(load_biosyn(path, report)), Term)]
    assert terms == ["alzheimer's disease", "alzheimer disease"]
    assert report.notes["lines with HTML entities (decoded)"] == 1
