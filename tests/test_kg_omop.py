"""``kg build --format omop``: an Athena download folder (tab- or comma-separated) → KG, and
the concepts' attributes through the index, ``termnorm lookup`` and the candidates' JSON."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from _cli import run_main
from conftest import require_benchmarks
from termnorm._artifacts import file_sha256
from termnorm.errors import InputFormatError
from termnorm.index import TermIndex
from termnorm.kg import KnowledgeGraph
from termnorm.kg.build import SourceSpec, build_kg_to_dir
from termnorm.kg.records import LoadReport

CONCEPT_HEADER = [
    "concept_id", "concept_name", "domain_id", "vocabulary_id", "concept_class_id",
    "standard_concept", "concept_code", "valid_start_date", "valid_end_date", "invalid_reason",
]  # fmt: skip
CONCEPTS = [  # id, name, domain, vocabulary, class, standard, code, end date, invalid reason
    (201826, "Type 2 diabetes mellitus", "Condition", "SNOMED", "Clinical Finding", "S", "44054006", "20991231", ""),
    (201820, "Diabetes mellitus", "Condition", "SNOMED", "Clinical Finding", "S", "73211009", "20991231", ""),
    (31821, "Endocrine disorder", "Condition", "SNOMED", "Clinical Finding", "S", "362969004", "20991231", ""),
    (3004410, "Hemoglobin A1c/Hemoglobin.total in Blood", "Measurement", "LOINC", "Lab Test", "S", "4548-4", "20991231", ""),
    (8713, 'gram per deciliter "g/dL"', "Unit", "UCUM", "Unit", "S", "g/dL", "20991231", ""),
    (19078461, "metformin 500 MG Oral Tablet", "Drug", "RxNorm", "Clinical Drug", "S", "861007", "20991231", ""),
    (45552385, "Type 2 diabetes mellitus without complications", "Condition", "ICD10CM", "4-char billing code", "", "E11.9", "20991231", ""),
    (1567956, "Type 2 diabetes mellitus", "Condition", "ICD10CM", "3-char nonbill code", "", "E11", "20991231", ""),
    (40000001, "Old diabetes concept", "Condition", "SNOMED", "Clinical Finding", "", "999999", "20020131", "D"),
    (40000002, "Expired haemoglobin test", "Measurement", "LOINC", "Lab Test", "S", "9999-9", "20100101", ""),
]  # fmt: skip
SYNONYMS = [
    (201826, "T2DM", 4180186),
    (201826, "Diabète de type 2", 4180190),
    (3004410, "HbA1c", 4180186),
    (45552385, "NIDDM", 4180186),
]
RELATIONSHIPS = [  # concept_id_1, concept_id_2, relationship_id, invalid_reason
    (201826, 201820, "Is a", ""),
    (201820, 31821, "Is a", ""),
    (201820, 201826, "Subsumes", ""),
    (201826, 99999999, "Is a", ""),  # parent outside the download
    (45552385, 201826, "Maps to", ""),
    (1567956, 201826, "Maps to", ""),
    (40000001, 201820, "Maps to", ""),  # a deprecated name reaches its replacement
    (201826, 201826, "Maps to", ""),
    (12345678, 201826, "Maps to", ""),  # source outside the download
    (45552385, 88888888, "Maps to", ""),  # target outside the download
    (31821, 201820, "Is a", "D"),
    (201826, 4000000, "Has finding site", ""),
]
ANCESTORS = [(31821, 201826, 2), (201820, 201826, 1)]
RELATIONSHIP_HEADER = [
    "concept_id_1", "concept_id_2", "relationship_id", "valid_start_date", "valid_end_date",
    "invalid_reason",
]  # fmt: skip
ANCESTOR_HEADER = [
    "ancestor_concept_id", "descendant_concept_id", "min_levels_of_separation",
    "max_levels_of_separation",
]  # fmt: skip
AS_OF = {"as_of": "20240101"}


def _dashed(date: str) -> str:
    return f"{date[:4]}-{date[4:6]}-{date[6:]}"


def write_athena(folder: Path, tab: bool) -> Path:
    """The fixture download: tab-separated without quoting and YYYYMMDD dates (Athena), or
    comma CSV with quoting and YYYY-MM-DD dates (a CDM database's export, Eunomia)."""
    folder.mkdir(parents=True, exist_ok=True)
    date = (lambda d: d) if tab else _dashed
    tables = {
        "CONCEPT": (
            CONCEPT_HEADER,
            [(*c[:7], date("19700101"), date(c[7]), c[8]) for c in CONCEPTS],
        ),
        "CONCEPT_SYNONYM": (
            ["concept_id", "concept_synonym_name", "language_concept_id"],
            SYNONYMS,
        ),
        "CONCEPT_RELATIONSHIP": (
            RELATIONSHIP_HEADER,
            [(a, b, r, date("19700101"), date("20991231"), i) for a, b, r, i in RELATIONSHIPS],
        ),
        "CONCEPT_ANCESTOR": (ANCESTOR_HEADER, [(a, d, n, n) for a, d, n in ANCESTORS]),
    }
    for name, (header, rows) in tables.items():
        with open(folder / f"{name}.csv", "w", encoding="utf-8", newline="") as handle:
            if tab:
                for row in [header, *rows]:
                    handle.write("\t".join(str(v) for v in row) + "\n")
            else:
                csv.writer(handle).writerows([header, *rows])
    return folder


def build(folder: Path, out: Path, **options: object) -> tuple[KnowledgeGraph, LoadReport]:
    _, (report,) = build_kg_to_dir([SourceSpec("omop", folder, {**AS_OF, **options})], out)
    return KnowledgeGraph.load(out), report


def _ids(kg: KnowledgeGraph) -> set[int]:
    return {int(c.split(":")[1]) for c in kg.concepts["concept_id"]}


@pytest.fixture(params=["tab", "comma"])
def athena(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    return write_athena(tmp_path / request.param, tab=request.param == "tab")


def test_tab_and_comma_downloads_give_the_same_kg(tmp_path: Path) -> None:
    tab, tab_report = build(write_athena(tmp_path / "t", True), tmp_path / "kt")
    comma, comma_report = build(write_athena(tmp_path / "c", False), tmp_path / "kc")
    assert (tab_report.info["delimiter"], comma_report.info["delimiter"]) == ("tab", "comma")
    assert tab.fingerprint == comma.fingerprint
    assert tab_report.dropped == comma_report.dropped


def test_invalid_concepts_dropped_and_counted_or_kept(athena: Path, tmp_path: Path) -> None:
    kg, report = build(athena, tmp_path / "kg")
    assert _ids(kg) == {201826, 201820, 31821, 3004410, 8713, 19078461, 45552385, 1567956}
    assert report.read["concepts"] == 10
    assert report.dropped["concept: invalid (invalid_reason D)"] == 1
    assert report.dropped["concept: valid_end_date passed"] == 1
    assert kg.card["counts"]["concepts"] == report.kept["concepts"] == 8
    everything, _ = build(athena, tmp_path / "all", include_invalid=True)
    assert _ids(everything) == _ids(kg) | {40000001, 40000002}
    old = everything.concepts.set_index("concept_id").loc["OMOP:40000001", "attributes"]
    assert old["invalid_reason"] == "D"


@pytest.mark.parametrize(
    ("options", "expected", "reason", "dropped"),
    [
        ({"vocabulary": "SNOMED,LOINC"}, {201826, 201820, 31821, 3004410},
         "concept: vocabulary not selected", 4),
        ({"domain": ("Condition",)}, {201826, 201820, 31821, 45552385, 1567956},
         "concept: domain not selected", 3),
        ({"concept_class": "Lab Test"}, {3004410}, "concept: concept class not selected", 7),
        ({"standard_only": True}, {201826, 201820, 31821, 3004410, 8713, 19078461},
         "concept: not standard (standard_only)", 2),
    ],
)  # fmt: skip
def test_filters(
    athena: Path,
    tmp_path: Path,
    options: dict[str, object],
    expected: set[int],
    reason: str,
    dropped: int,
) -> None:
    kg, report = build(athena, tmp_path / "kg", **options)
    assert _ids(kg) == expected
    assert report.dropped[reason] == dropped
    assert sum(v for k, v in report.dropped.items() if k.startswith("concept:")) == 10 - len(
        expected
    )


def test_maps_to_names_are_synonyms_of_the_standard_target(athena: Path, tmp_path: Path) -> None:
    kg, report = build(athena, tmp_path / "kg", standard_only=True)
    terms = kg.terms.set_index("concept_id")
    t2dm = terms.loc["OMOP:201826"]
    assert list(zip(t2dm["term"], t2dm["source"], t2dm["is_preferred"], strict=True)) == [
        ("Type 2 diabetes mellitus", "SNOMED", True),
        ("T2DM", "SNOMED", False),
        ("Type 2 diabetes mellitus without complications", "maps_to:ICD10CM", False),
        ("NIDDM", "maps_to:ICD10CM", False),
    ]  # the French synonym is not English; E11's name repeats the target's
    assert report.dropped["synonym: language not selected (synonym_languages)"] == 1
    assert report.dropped["term: duplicate (case-insensitive)"] == 1
    diabetes = terms.loc[["OMOP:201820"]]
    assert ("Old diabetes concept", "maps_to:SNOMED") in set(
        zip(diabetes["term"], diabetes["source"], strict=True)
    )
    assert report.dropped["relationship 'Maps to': source not in CONCEPT"] == 1
    assert report.dropped["relationship 'Maps to': target not a kept concept"] == 1
    assert report.dropped["relationship 'Maps to': to itself"] == 1
    without, _ = build(athena, tmp_path / "plain", standard_only=True, maps_to_synonyms=False)
    assert not without.terms["source"].str.startswith("maps_to").any()


def test_is_a_hierarchy_and_relationships_outside_counted(athena: Path, tmp_path: Path) -> None:
    kg, report = build(athena, tmp_path / "kg")
    edges = set(kg.relations.itertuples(index=False, name=None))
    assert edges == {
        ("OMOP:201826", "is_a", "OMOP:201820"),
        ("OMOP:201820", "is_a", "OMOP:31821"),
    }
    assert report.read["relationships"] == len(RELATIONSHIPS)
    assert report.read["ancestors"] == len(ANCESTORS)
    assert report.dropped["relationship 'Is a': endpoint not a kept concept"] == 1
    assert report.dropped["relationship: invalid (invalid_reason set)"] == 1
    assert report.dropped["relationship: type not loaded (only Is a, Maps to)"] == 2
    assert report.dropped["relationship 'Is a': duplicate"] == 1  # also in CONCEPT_ANCESTOR
    assert report.dropped["ancestor: not a direct parent (min_levels_of_separation != 1)"] == 1
    assert report.kept["relations"] == kg.card["counts"]["relations"] == 2
    counts = [*report.read.values(), *report.kept.values(), *report.dropped.values()]
    assert all(type(n) is int for n in counts)  # JSON numbers in the card, not numpy ones


ABSENT = "4000000, 12345678, 88888888, 99999999"
"""The IDs the fixture's relationship rows name that its CONCEPT lacks."""


def test_relationship_ids_absent_from_concept_are_warned(
    athena: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    _, report = build(athena, tmp_path / "kg")
    (warning,) = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert f"name 4 concept IDs that CONCEPT.csv lacks ({ABSENT})" in warning
    assert report.info["concept ids absent from CONCEPT"] == "4"
    kept = [r for r in RELATIONSHIPS if str(r[0]) not in ABSENT and str(r[1]) not in ABSENT]
    consistent = write_athena(tmp_path / "consistent", tab=True)
    rows = [f"{a}\t{b}\t{r}\t19700101\t20991231\t{i}" for a, b, r, i in kept]
    _rewrite(consistent / "CONCEPT_RELATIONSHIP.csv", "\t".join(RELATIONSHIP_HEADER), rows)
    caplog.clear()
    _, report = build(consistent, tmp_path / "kg2")
    assert not [r for r in caplog.records if r.levelname == "WARNING"]
    assert "concept ids absent from CONCEPT" not in report.info


def test_a_concept_table_cut_on_a_row_boundary_is_warned_on_stderr(tmp_path: Path) -> None:
    folder = write_athena(tmp_path / "d", tab=True)
    lines = (folder / "CONCEPT.csv").read_text(encoding="utf-8").splitlines(keepends=True)
    (folder / "CONCEPT.csv").write_text("".join(lines[:4]), encoding="utf-8")  # 3 of 10 rows
    args = ["kg", "build", str(folder), "--format", "omop", "--out", str(tmp_path / "kg")]
    done = subprocess.run(
        [sys.executable, "-c", "from termnorm.cli.main import main; main()", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")},
    )
    assert done.returncode == 0, done.stderr
    assert "WARNING termnorm.kg.omop:" in done.stderr
    # the cut concepts that relationships name join the four absent from the download
    absent = (
        "7 concept IDs that CONCEPT.csv lacks (1567956, 4000000, 12345678, 40000001, 45552385, ...)"
    )
    assert absent in done.stderr


def test_attributes_and_vocabulary_curies(athena: Path, tmp_path: Path) -> None:
    kg, _ = build(athena, tmp_path / "kg")
    concepts = kg.concepts.set_index("concept_id")
    assert concepts.loc["OMOP:201826", "attributes"] == {
        "vocabulary_id": "SNOMED",
        "concept_code": "44054006",
        "domain_id": "Condition",
        "concept_class_id": "Clinical Finding",
        "standard_concept": "S",
    }
    assert concepts.loc["OMOP:201826", "semantic_types"] == ["Condition"]
    assert concepts.loc["OMOP:45552385", "attributes"]["standard_concept"] == ""
    curies = {cid: alt for cid, (alt,) in concepts["alt_ids"].items()}
    assert curies["OMOP:201826"] == "SNOMEDCT:44054006"
    assert curies["OMOP:3004410"] == "LOINC:4548-4"
    assert curies["OMOP:19078461"] == "RxNorm:861007"
    assert curies["OMOP:45552385"] == "ICD10CM:E11.9"
    assert concepts.loc["OMOP:8713", "name"] == 'gram per deciliter "g/dL"'


def _rewrite(path: Path, header: str, lines: list[str]) -> None:
    path.write_text("\n".join([header, *lines]) + "\n", encoding="utf-8")


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (["1,a,Condition,SNOMED,X,S,1,1970-01-01,2099-12-31,", "2,b,Condition"],
         r"CONCEPT\.csv:3: expected 10 columns, got 3"),
        (["1,a,Condition,SNOMED,X,S,1,1970-01-01,2099-12-31,",
          "x2,b,Condition,SNOMED,X,S,2,1970-01-01,2099-12-31,"],
         r"CONCEPT\.csv:3: concept_id is not an integer: 'x2'"),
        (["1,a,Condition,SNOMED,X,S,1,1970-01-01,2099-12-31,",
          ",b,Condition,SNOMED,X,S,2,1970-01-01,2099-12-31,"],
         r"CONCEPT\.csv:3: concept_id is not an integer: ''"),
        (["1,a,Condition,SNOMED,X,S,1,1970-01-01,31/12/2099,"],
         r"CONCEPT\.csv: valid_end_date '31/12/2099' is not a date YYYYMMDD"),
    ],
)  # fmt: skip
def test_malformed_rows_name_file_and_line(tmp_path: Path, lines: list[str], message: str) -> None:
    folder = write_athena(tmp_path / "d", tab=False)
    _rewrite(folder / "CONCEPT.csv", ",".join(CONCEPT_HEADER), lines)
    with pytest.raises(InputFormatError, match=message):
        build(folder, tmp_path / "kg")
    assert not (tmp_path / "kg").exists()  # atomic: nothing half-written


def test_missing_column_and_missing_table_are_named(tmp_path: Path) -> None:
    folder = write_athena(tmp_path / "d", tab=True)
    _rewrite(folder / "CONCEPT_RELATIONSHIP.csv", "concept_id_1\tconcept_id_2", ["1\t2"])
    with pytest.raises(InputFormatError, match=r"CONCEPT_RELATIONSHIP\.csv:1: no column "):
        build(folder, tmp_path / "kg")
    (folder / "CONCEPT.csv").unlink()
    with pytest.raises(InputFormatError, match="no CONCEPT table"):
        build(folder, tmp_path / "kg")


def test_cli_flags_reach_the_loader(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = write_athena(tmp_path / "d", tab=True)
    args = ["kg", "build", str(folder), "--format", "omop", "--vocabulary", "SNOMED"]
    args += ["--standard-only", "--domain", "Condition", "--out", str(tmp_path / "kg"), "--json"]
    code, out, err = run_main(args, capsys)
    assert code == 0, err
    card = json.loads(out)
    assert card["sources"][0]["options"]["vocabulary"] == ["SNOMED"]
    assert card["counts"]["concepts"] == 3


def test_attributes_reach_index_lookup_and_candidates(
    tmp_path: Path, tiny_bert_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kg_dir = tmp_path / "kg"
    build(write_athena(tmp_path / "d", tab=True), kg_dir, standard_only=True)
    index = tmp_path / "idx"
    args = ["index", "build", "--kg", str(kg_dir), "--model", str(tiny_bert_path)]
    code, _, err = run_main([*args, "--backend", "exact", "--out", str(index)], capsys)
    assert code == 0, err
    assert TermIndex.load(index).concept("SNOMEDCT:44054006").concept_id == "OMOP:201826"
    code, out, err = run_main(["lookup", "OMOP:201826", "--index", str(index), "--json"], capsys)
    assert code == 0, err
    (info,) = json.loads(out)
    assert info["attributes"]["concept_code"] == "44054006"
    assert ("NIDDM", "maps_to:ICD10CM") in {(s["term"], s["source"]) for s in info["synonyms"]}
    code, out, _ = run_main(["lookup", "OMOP:201826", "--index", str(index)], capsys)
    assert "vocabulary_id: SNOMED" in out
    query = ["normalize", "Type 2 diabetes mellitus", "--index", str(index), "--json", "-k", "1"]
    code, out, err = run_main(query, capsys)
    assert code == 0, err
    (row,) = json.loads(out)
    (best,) = row["candidates"]
    assert best["concept_id"] == "OMOP:201826"
    assert best["attributes"]["vocabulary_id"] == "SNOMED"


def test_folders_without_the_attributes_column_still_load(
    tiny_kg_dir: Path, index_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for folder in (tiny_kg_dir, index_dir):
        path = folder / "concepts.parquet"
        table = pq.read_table(path)
        pq.write_table(table.drop_columns(["attributes"]), path)
    card_path = index_dir / "index.json"
    card = json.loads(card_path.read_text())
    card["tables"]["concepts.parquet"] = file_sha256(index_dir / "concepts.parquet")
    card_path.write_text(json.dumps(card))
    kg = KnowledgeGraph.load(tiny_kg_dir)
    assert all(a == {} for a in kg.concepts["attributes"])
    index = TermIndex.load(index_dir)
    assert dict(index.concept("T:0004").attributes) == {}
    code, out, err = run_main(["lookup", "T:0004", "--index", str(index_dir), "--json"], capsys)
    assert code == 0, err
    assert "attributes" not in json.loads(out)[0]
    query = ["normalize", "asthma", "--index", str(index_dir), "--json", "-k", "1"]
    code, out, err = run_main(query, capsys)
    assert code == 0, err
    assert "attributes" not in json.loads(out)[0]["candidates"][0]


@pytest.mark.slow
def test_real_eunomia_subset_to_an_index(
    tmp_path: Path, tiny_bert_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = require_benchmarks("omop_eunomia_synthea27nj")
    kg, report = build(folder, tmp_path / "kg")
    assert report.info["delimiter"] == "comma"
    assert report.read["concepts"] == len(pd.read_csv(folder / "CONCEPT.csv"))
    with open(folder / "CONCEPT_RELATIONSHIP.csv", encoding="utf-8") as handle:
        assert report.read["relationships"] == sum(1 for _ in handle) - 1
    assert report.dropped["relationship 'Is a': endpoint not a kept concept"] > 0
    assert len(kg.relations) == report.kept["relations"] > 0
    index = tmp_path / "idx"
    args = ["index", "build", "--kg", str(tmp_path / "kg"), "--model", str(tiny_bert_path)]
    code, _, err = run_main([*args, "--backend", "exact", "--out", str(index)], capsys)
    assert code == 0, err
    code, out, err = run_main(
        ["lookup", "SNOMEDCT:10029008", "--index", str(index), "--json"], capsys
    )
    assert code == 0, err
    (info,) = json.loads(out)
    assert (info["concept_id"], info["name"]) == ("OMOP:4002575", "Suicide precautions")
    assert info["attributes"]["vocabulary_id"] == "SNOMED"


def test_attributes_survive_a_merge_with_another_source(tmp_path: Path) -> None:
    local = tmp_path / "local.tsv"
    local.write_text("OMOP:201826\tsugar diabetes\nHOSP:1\tlocal code\n", encoding="utf-8")
    folder = write_athena(tmp_path / "d", tab=True)
    specs = [SourceSpec("omop", folder, {**AS_OF, "standard_only": True}), SourceSpec("tsv", local)]
    build_kg_to_dir(specs, tmp_path / "kg")  # two sources: built in memory, not streamed
    kg = KnowledgeGraph.load(tmp_path / "kg")
    concepts = kg.concepts.set_index("concept_id")
    assert concepts.loc["OMOP:201826", "attributes"]["concept_code"] == "44054006"
    assert concepts.loc["HOSP:1", "attributes"] == {}
    assert "sugar diabetes" in set(kg.terms.loc[kg.terms["concept_id"] == "OMOP:201826", "term"])
