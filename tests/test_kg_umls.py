"""UMLS RRF loader on a 21-CUI fixture in the real MRCONSO/MRREL/MRSTY layout.

Expected counts follow from the fixture's design (see tests/fixtures/kg/umls): 55 MRCONSO
rows, of which 5 are non-English, 4 suppressible (E, Y, O, O) and 4 case/space duplicates;
C9999999 has nothing left; 21 MRREL rows with 7 built to be dropped by default.
"""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pytest

from termnorm.errors import InputFormatError
from termnorm.kg import Concept, LoadReport, Relation, Term
from termnorm.kg.umls import (
    UmlsOptions,
    find_umls_files,
    keeps_direction,
    lat_code,
    load_umls,
    relation_label,
)

UMLS = Path(__file__).parent / "fixtures" / "kg" / "umls"


def _load(path: Path = UMLS, **options: object) -> tuple[list[object], LoadReport]:
    report = LoadReport("umls")
    records = list(load_umls(path, report, UmlsOptions(**options)))  # type: ignore[arg-type]
    return records, report


def _of(records: list[object], kind: type) -> list:
    return [r for r in records if isinstance(r, kind)]


def test_default_counts_and_drop_reasons() -> None:
    records, report = _load()
    assert report.read["MRCONSO rows"] == 55
    assert report.read["MRSTY rows"] == 22
    assert report.read["MRREL rows"] == 21
    assert len(_of(records, Concept)) == report.kept["concepts"] == 20
    assert len(_of(records, Term)) == report.kept["terms"] == 42
    assert len(_of(records, Relation)) == report.kept["relations"] == 14
    assert report.dropped["term: language not selected (LAT)"] == 5
    assert report.dropped["term: suppressible (SUPPRESS=O)"] == 2
    assert report.dropped["term: suppressible (SUPPRESS=E)"] == 1
    assert report.dropped["term: suppressible (SUPPRESS=Y)"] == 1
    assert report.dropped["term: duplicate (case-insensitive)"] == 4
    assert report.dropped["concept: no term left after filters"] == 1
    assert report.dropped["relation: self-loop"] == 1
    assert report.dropped["relation: duplicate"] == 2
    assert report.dropped["relation: endpoint not a kept concept"] == 2
    assert report.dropped["relation: REL XR skipped"] == 1
    assert report.dropped["relation: suppressible (SUPPRESS=Y)"] == 1


def test_concept_name_terms_types_and_codes() -> None:
    records, _ = _load()
    concepts = {c.concept_id: c for c in _of(records, Concept)}
    mi = concepts["UMLS:C0027051"]
    # the preferred English row (TS=P, STT=PF, ISPREF=Y) is the 3rd row of the CUI
    assert mi.name == "Myocardial Infarction"
    assert mi.semantic_types == ("Disease or Syndrome",)
    assert "MSH:D009203" in mi.alt_ids and "SNOMEDCT_US:22298006" in mi.alt_ids
    terms = [t for t in _of(records, Term) if t.concept_id == "UMLS:C0027051"]
    assert [t.term for t in terms] == ["Myocardial Infarction", "Heart attack", "MI"]
    assert [t.is_preferred for t in terms] == [True, False, False]
    assert {t.lang for t in terms} == {"en"}
    assert terms[1].source == "MSH"
    assert set(concepts["UMLS:C0010054"].semantic_types) == {
        "Disease or Syndrome",
        "Pathologic Function",
    }
    assert "UMLS:C9999999" not in concepts
    # whitespace runs collapse before deduplication
    dyspnea = [t.term for t in _of(records, Term) if t.concept_id == "UMLS:C0013404"]
    assert dyspnea == ["Dyspnea", "Shortness of breath"]


def test_relation_labels_and_direction() -> None:
    records, _ = _load()
    triples = {(r.head, r.relation, r.tail) for r in _of(records, Relation)}
    # MRREL "C0018799|CHD|C0027051|isa" reads "C0027051 isa C0018799"
    assert ("UMLS:C0027051", "CHD:isa", "UMLS:C0018799") in triples
    assert ("UMLS:C0018799", "PAR:inverse_isa", "UMLS:C0027051") in triples
    assert ("UMLS:C0027051", "RO:has_finding_site", "UMLS:C0018787") in triples
    assert ("UMLS:C0011860", "CHD", "UMLS:C0011849") in triples  # no RELA: REL alone
    assert ("UMLS:C0011860", "CHD:isa", "UMLS:C0011849") in triples
    assert not any(h == t for h, _, t in triples)


def test_one_direction_keeps_one_row_per_inverse_pair() -> None:
    records, report = _load(one_direction=True)
    relations = _of(records, Relation)
    assert len(relations) == 7
    assert report.dropped["relation: inverse direction (one_direction)"] == 8
    labels = {r.relation.split(":")[0] for r in relations}
    assert labels == {"CHD", "RN", "SIB", "RO"}
    sib = [r for r in relations if r.relation == "SIB"]
    assert [(r.head, r.tail) for r in sib] == [("UMLS:C0004096", "UMLS:C0032285")]


@pytest.mark.parametrize(
    ("rel", "head", "tail", "kept"),
    [
        ("CHD", "B", "A", True),
        ("PAR", "A", "B", False),
        ("RN", "B", "A", True),
        ("RB", "A", "B", False),
        ("AQ", "A", "B", True),
        ("QB", "B", "A", False),
        ("SIB", "A", "B", True),
        ("SIB", "B", "A", False),
        ("RO", "A", "B", True),
        ("RO", "B", "A", False),
    ],
)
def test_keeps_direction_rule(rel: str, head: str, tail: str, kept: bool) -> None:
    assert keeps_direction(rel, head, tail) is kept


def test_relation_label() -> None:
    assert relation_label("RO", "has_finding_site") == "RO:has_finding_site"
    assert relation_label("PAR", "") == "PAR"


def test_language_and_sab_filters() -> None:
    records, _ = _load(langs=("ENG", "zh"))
    concepts = {c.concept_id: c for c in _of(records, Concept)}
    # no English P/PF/Y row: the Chinese preferred row names the concept
    assert concepts["UMLS:C0040145"].name == "甲状腺切除术"
    zh = [t for t in _of(records, Term) if t.lang == "zh"]
    assert [t.term for t in zh] == ["甲状腺切除术"]

    records, report = _load(sabs=("MSH",))
    concepts = {c.concept_id: c for c in _of(records, Concept)}
    assert len(concepts) == 19
    assert "UMLS:C0040145" not in concepts
    assert concepts["UMLS:C0010054"].name == "Coronary artery disease"  # first kept row
    assert len(_of(records, Relation)) == 6
    assert report.dropped["relation: source vocabulary not selected (SAB)"] == 12


def test_keep_suppressed() -> None:
    records, report = _load(keep_suppressed=True)
    concepts = {c.concept_id for c in _of(records, Concept)}
    assert "UMLS:C9999999" in concepts  # its English row is obsolete (O), kept now
    assert not any(k.startswith("term: suppressible") for k in report.dropped)
    assert len(_of(records, Relation)) == 14 + 1 + 2  # suppressible edge + C9999999's edges


def test_reads_gzip_and_mrconso_path(tmp_path: Path) -> None:
    for name in ("MRCONSO.RRF", "MRREL.RRF"):
        with open(UMLS / name, "rb") as src, gzip.open(tmp_path / f"{name}.gz", "wb") as dst:
            shutil.copyfileobj(src, dst)
    records, report = _load(tmp_path)
    assert report.kept["concepts"] == 20
    assert report.info["mrsty"].startswith("absent")  # MRSTY optional
    assert all(c.semantic_types == () for c in _of(records, Concept))
    assert find_umls_files(UMLS / "MRCONSO.RRF").mrrel == UMLS / "MRREL.RRF"


def test_malformed_line_names_file_and_line(tmp_path: Path) -> None:
    lines = (UMLS / "MRCONSO.RRF").read_text().splitlines()
    lines[6] = "C0004096|ENG|P|only a few fields|"
    (tmp_path / "MRCONSO.RRF").write_text("\n".join(lines) + "\n")
    with pytest.raises(InputFormatError, match=r"MRCONSO\.RRF:7: expected 18 '\|'-separated"):
        _load(tmp_path)


def test_unsorted_mrconso_is_an_error(tmp_path: Path) -> None:
    lines = (UMLS / "MRCONSO.RRF").read_text().splitlines()
    (tmp_path / "MRCONSO.RRF").write_text("\n".join([*lines[3:], *lines[:3]]) + "\n")
    with pytest.raises(InputFormatError, match="not sorted by CUI"):
        _load(tmp_path)


MRFILES = (
    "MRCONSO.RRF|Concept names and sources|CUI,LAT,TS,LUI,STT,SUI,ISPREF,AUI,SAUI,SCUI,SDUI,"
    "SAB,TTY,CODE,STR,SRL,SUPPRESS,CVF|18|55|5000|\n"
    "MRREL.RRF|Related concepts|CUI1,AUI1,STYPE1,REL,CUI2,AUI2,STYPE2,RELA,RUI,SRUI,SAB,SL,RG,"
    "DIR,SUPPRESS,CVF|16|21|2000|\n"
    "MRSTY.RRF|Semantic types|CUI,TUI,STN,STY,ATUI,CVF|6|22|1000|\n"
)
"""The fixture's row counts, as a release's MRFILES.RRF lists them."""


def test_tables_with_the_rows_mrfiles_lists_load_without_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    shutil.copytree(UMLS, tmp_path / "META")
    (tmp_path / "META" / "MRFILES.RRF").write_text(MRFILES)
    _, report = _load(tmp_path / "META")
    assert report.kept["concepts"] == 20
    assert not [r for r in caplog.records if r.levelname == "WARNING"]


def test_a_table_cut_short_of_the_rows_mrfiles_lists_is_warned(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    shutil.copytree(UMLS, tmp_path / "META")
    (tmp_path / "META" / "MRFILES.RRF").write_text(MRFILES)
    lines = (UMLS / "MRCONSO.RRF").read_text().splitlines(keepends=True)
    (tmp_path / "META" / "MRCONSO.RRF").write_text("".join(lines[:40]))  # on a row boundary
    _, report = _load(tmp_path / "META")
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert warnings == [
        "MRCONSO.RRF has 40 rows but MRFILES.RRF lists 55: the file may be cut short or from "
        "another release; compare it with the download"
    ]
    assert report.info["MRCONSO rows listed in MRFILES"] == "55"


def test_missing_mrconso(tmp_path: Path) -> None:
    with pytest.raises(InputFormatError, match=r"no MRCONSO\.RRF"):
        _load(tmp_path)


def test_lat_code() -> None:
    assert lat_code("en") == "ENG"
    assert lat_code("fre") == "FRE"
