"""Exports: SSSOM TSV validated by the ``sssom`` package, OMOP's source_to_concept_map with
its columns, a plain CSV of every row, and a synonyms file ``--synonyms`` reads."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from _project_crash import build
from _project_fixtures import write_codes
from termnorm.errors import ProjectError
from termnorm.mentions.synonyms import load_synonyms
from termnorm.projects import (
    PipelineSettings,
    apply_source,
    auto_approve,
    decide,
    export,
    init_project,
    run_project,
)
from termnorm.projects.exports import MANUAL, OMOP_COLUMNS, THRESHOLD

ROWS = [
    ("A1", "heart attack", "10", ""),
    ("A 2", "pressure high", "5", ""),
    ("A3", "sugar", "4", ""),
    ("A4", "no idea", "1", ""),
    ("A5", "to be dropped", "1", ""),
    ("A6", "still open", "1", ""),
]


@pytest.fixture()
def decided(tmp_path: Path) -> Path:
    """A project with one row of each kind: approved, picked (broad), auto-approved, no
    match, retired, still open. Candidates are T:0001 (1.0), T:0002 (0.5), ..."""
    db = tmp_path / "p.db"
    init_project(
        "p",
        write_codes(tmp_path / "c.csv", ROWS),
        "code",
        "label",
        settings=PipelineSettings(k=3),
        db=db,
    )
    run_project("p", build, db=db, show_progress=False)  # type: ignore[arg-type]
    decide("p", "A1", "approve", reviewer="ann", comment="checked", db=db)
    decide("p", "A 2", "pick", concept_id="T:0002", predicate="broad", reviewer="bob", db=db)
    decide("p", "A4", "no_match", reviewer="ann", db=db)
    decide("p", "A5", "approve", reviewer="ann", db=db)
    apply_source("p", write_codes(tmp_path / "c2.csv", [r for r in ROWS if r[0] != "A5"]), db=db)
    decide("p", "A6", "flag", reviewer="ann", db=db)
    assert auto_approve("p", 0.99, reviewer="ann", db=db).approved == 1  # A3
    return db


@pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore:.*copy_on_write.*")
def test_sssom_export_validates_and_says_who_decided_how(decided: Path, tmp_path: Path) -> None:
    from sssom.constants import SchemaValidationType
    from sssom.parsers import parse_sssom_table
    from sssom.validators import validate

    out = tmp_path / "p.sssom.tsv"
    assert export("p", "sssom", out, db=decided).rows == 3
    checks = [SchemaValidationType.JsonSchema, SchemaValidationType.PrefixMapCompleteness]
    mappings = parse_sssom_table(out)
    validate(mappings, checks, fail_on_error=True)
    rows = {r["subject_id"]: r for r in mappings.df.to_dict("records")}
    assert set(rows) == {"p:A1", "p:A%202", "p:A3"}
    assert (rows["p:A1"]["predicate_id"], rows["p:A1"]["mapping_justification"]) == (
        "skos:exactMatch",
        MANUAL,
    )
    assert rows["p:A1"]["author_id"] == "reviewer:ann" and rows["p:A1"]["comment"] == "checked"
    assert (rows["p:A%202"]["predicate_id"], rows["p:A%202"]["object_id"]) == (
        "skos:broadMatch",
        "T:0002",
    )
    assert rows["p:A3"]["mapping_justification"] == THRESHOLD
    assert rows["p:A3"]["confidence"] == pytest.approx(1.0)
    assert rows["p:A1"]["subject_label"] == "heart attack" and rows["p:A1"]["object_label"] == "c1"
    # the validation is not vacuous: a prefix left out of the curie map fails it
    broken = tmp_path / "broken.sssom.tsv"
    broken.write_text(
        "".join(
            line
            for line in out.read_text().splitlines(keepends=True)
            if not line.startswith("#   T:")
        )
    )
    with pytest.raises(Exception, match="validation error"):
        validate(parse_sssom_table(broken), checks, fail_on_error=True)


def test_omop_export_has_source_to_concept_map_columns(decided: Path, tmp_path: Path) -> None:
    out = tmp_path / "stcm.csv"
    # the concepts' attributes as an index built from OMOP tables holds them
    omop = {f"T:{i:04d}": {"vocabulary_id": f"VOC{i}"} for i in range(1, 4)}.__getitem__
    report = export("p", "omop", out, db=decided, vocabulary_id="HOSP_LAB", concepts=omop)
    assert report.rows == 4
    with out.open(newline="") as f:
        reader = csv.DictReader(f)
        assert tuple(reader.fieldnames or ()) == OMOP_COLUMNS
        rows = {r["source_code"]: r for r in reader}
    assert rows["A1"]["target_concept_id"] == "1" and rows["A1"]["target_vocabulary_id"] == "VOC1"
    assert rows["A 2"]["target_vocabulary_id"] == "VOC2"  # the concept's, not the namespace
    assert rows["A4"]["target_concept_id"] == "0" and rows["A4"]["target_vocabulary_id"] == "None"
    assert (
        rows["A1"]["source_vocabulary_id"] == "HOSP_LAB"
        and rows["A1"]["valid_end_date"] == "2099-12-31"
    )
    assert "A5" not in rows and "A6" not in rows  # retired, flagged


def test_omop_export_refuses_concept_ids_that_are_not_numbers(
    decided: Path, tmp_path: Path
) -> None:
    hp = {"HP:X12": ("HP:X12", "a concept of an HP index")}.__getitem__  # no index read
    decide("p", "A6", "pick", concept_id="HP:X12", reviewer="ann", concepts=hp, db=decided)
    with pytest.raises(ProjectError, match=r"code 'A6' maps to 'HP:X12'.*--format sssom"):
        export("p", "omop", tmp_path / "stcm.csv", db=decided)
    assert not (tmp_path / "stcm.csv").exists()  # all or nothing


def test_csv_export_lists_every_live_row_with_its_state(decided: Path, tmp_path: Path) -> None:
    out = tmp_path / "all.csv"
    assert export("p", "csv", out, db=decided).rows == 5
    with out.open(newline="") as f:
        rows = {r["code"]: r for r in csv.DictReader(f)}
    states = {code: r["state"] for code, r in rows.items()}
    assert states == {
        "A1": "approved",
        "A 2": "approved",
        "A3": "auto_approved",
        "A4": "no_match",
        "A6": "flagged",
    }
    assert rows["A 2"]["reviewer"] == "bob" and rows["A 2"]["top_concept_id"] == "T:0001"


def test_synonyms_export_is_a_synonyms_file(decided: Path, tmp_path: Path) -> None:
    out = tmp_path / "syn.tsv"
    assert export("p", "synonyms", out, db=decided).rows == 1  # exact, by a reviewer: A1 only
    assert load_synonyms(out) == [("heart attack", ("T:0001",))]
