"""OMOP-shaped exports from an OMOP index (integer IDs, the concept's vocabulary, SSSOM's
vocabulary CURIE with the OMOP ID beside it) and OHDSI Usagi's mapping CSV both ways:
export, import, and a round trip that keeps every decision."""

from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path

import pytest

from _project_fixtures import write_codes
from termnorm.errors import DecisionError, InputFormatError, ProjectError
from termnorm.projects import (
    PipelineSettings,
    auto_approve,
    decide,
    export,
    import_usagi,
    init_project,
    run_project,
    show_row,
)
from termnorm.projects.exports import OMOP_ID_SLOT
from termnorm.projects.usagi import USAGI_COLUMNS
from termnorm.search.candidate import Candidate, RowResult

# concept ID -> (name, attributes), as an index built by `kg build --format omop` holds them
CONCEPTS: dict[str, tuple[str, dict[str, str]]] = {
    "OMOP:3004501": (
        "Glucose [Mass/volume] in Serum or Plasma",
        {"vocabulary_id": "LOINC", "concept_code": "2345-7", "domain_id": "Measurement"},
    ),
    "OMOP:4329847": (
        "Myocardial infarction",
        {"vocabulary_id": "SNOMED", "concept_code": "22298006", "domain_id": "Condition"},
    ),
    "OMOP:320128": (
        "Essential hypertension",
        {"vocabulary_id": "SNOMED", "concept_code": "59621000", "domain_id": "Condition"},
    ),
    "OMOP:201826": (
        "Type 2 diabetes mellitus",
        {"vocabulary_id": "SNOMED", "concept_code": "44054006", "domain_id": "Condition"},
    ),
}
ORDER = list(CONCEPTS)
# code, text, frequency, unit; the fake matcher's top concept and score per text
ROWS = [
    ("G1", "gluc", "120", "mg/dL"),
    ("M1", "heart attack", "40", ""),
    ("H1", "htn", "300", ""),
    ("N1", "zzqx", "2", ""),
    ("F1", "sugar", "15", ""),
    ("P1", "pending", "", ""),
    ("T1", "to map later", "1", ""),
]
TOP = {
    "gluc": ("OMOP:3004501", 0.9),
    "heart attack": ("OMOP:4329847", 0.8),
    "htn": ("OMOP:320128", 0.99),
    "zzqx": ("OMOP:3004501", 0.3),
    "sugar": ("OMOP:201826", 0.7),
    "pending": ("OMOP:201826", 0.5),
}


class FakeMatcher:
    """Every concept for each text: its top one first (score from ``TOP``), then the rest."""

    def normalize_rows(self, texts: Sequence[object], k: int = 5) -> list[RowResult]:
        out = []
        for text in texts:
            top, score = TOP[str(text)]
            ranked = [top, *(c for c in ORDER if c != top)][:k]
            out.append(
                RowResult(
                    [
                        Candidate(cid, CONCEPTS[cid][0], score - 0.1 * i, str(text), i + 1)
                        for i, cid in enumerate(ranked)
                    ]
                )
            )
        return out


def build(_spec: object, _synonyms: object) -> FakeMatcher:
    return FakeMatcher()


def attributes(concept_id: str) -> Mapping[str, str]:
    if concept_id not in CONCEPTS:
        raise DecisionError(f"no concept {concept_id!r} in the test index")
    return CONCEPTS[concept_id][1]


def resolve(concept_id: str) -> tuple[str, str]:
    if concept_id not in CONCEPTS:
        raise DecisionError(f"no concept {concept_id!r} in the test index")
    return concept_id, CONCEPTS[concept_id][0]


def _project(root: Path, db: Path, name: str, rows: list[tuple[str, str, str, str]]) -> None:
    codes = write_codes(root / f"{name}.csv", rows)
    init_project(name, codes, "code", "label", "count", ["unit"], PipelineSettings(k=3), db=db)


@pytest.fixture()
def decided(tmp_path: Path) -> Path:
    """Project ``p``: G1 approved (ann, comment), M1 picked broad (bob), H1 auto-approved,
    N1 no match, F1 flagged naming a concept, P1 to review; T1 retired from the run by
    being mapped later (still to map)."""
    db = tmp_path / "p.db"
    _project(tmp_path, db, "p", [r for r in ROWS if r[0] != "T1"])
    run_project("p", build, db=db, show_progress=False)  # type: ignore[arg-type]
    decide("p", "G1", "approve", reviewer="ann", comment="checked, mg/dL", db=db)
    decide("p", "M1", "pick", concept_id="OMOP:320128", predicate="broad", reviewer="bob", db=db)
    decide("p", "N1", "no_match", reviewer="ann", db=db)
    decide("p", "F1", "flag", concept_id="OMOP:201826", reviewer="bob", db=db)
    assert auto_approve("p", 0.95, reviewer="cal", db=db).approved == 1  # H1
    return db


def _last(project: str, code: str, db: Path) -> dict[str, object]:
    """The row's current (newest) decision as ``show_row`` gives it."""
    return show_row(project, code, db=db).decisions[-1]


def _utc(text: object) -> datetime:
    at = datetime.fromisoformat(str(text))
    return at if at.tzinfo is not None else at.replace(tzinfo=timezone.utc)


def _read(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_omop_export_writes_integer_ids_and_the_concepts_vocabulary(
    decided: Path, tmp_path: Path
) -> None:
    out = tmp_path / "stcm.csv"
    assert export("p", "omop", out, db=decided, concepts=attributes).rows == 4
    rows = {r["source_code"]: r for r in _read(out)}
    assert {c: (r["target_concept_id"], r["target_vocabulary_id"]) for c, r in rows.items()} == {
        "G1": ("3004501", "LOINC"),
        "M1": ("320128", "SNOMED"),
        "H1": ("320128", "SNOMED"),
        "N1": ("0", "None"),
    }


def test_omop_export_refuses_a_concept_without_an_omop_vocabulary(
    decided: Path, tmp_path: Path
) -> None:
    bare = {cid: {} for cid in CONCEPTS}.__getitem__  # an index not built from OMOP tables
    with pytest.raises(ProjectError, match=r"code 'G1' maps to 'OMOP:3004501'.*vocabulary_id"):
        export("p", "omop", tmp_path / "stcm.csv", db=decided, concepts=bare)
    assert not (tmp_path / "stcm.csv").exists()


@pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore:.*copy_on_write.*")
def test_sssom_export_writes_vocabulary_curies_with_the_omop_id_beside(
    decided: Path, tmp_path: Path
) -> None:
    from sssom.constants import SchemaValidationType
    from sssom.parsers import parse_sssom_table
    from sssom.validators import validate

    out = tmp_path / "p.sssom.tsv"
    assert export("p", "sssom", out, db=decided, concepts=attributes).rows == 3
    text = out.read_text()
    assert (
        "#   SNOMEDCT: http://snomed.info/id/" in text and "#   LOINC: https://loinc.org/" in text
    )
    mappings = parse_sssom_table(out)
    validate(
        mappings,
        [SchemaValidationType.JsonSchema, SchemaValidationType.PrefixMapCompleteness],
        fail_on_error=True,
    )
    header = next(line for line in text.splitlines() if not line.startswith("#"))
    assert header.split("\t")[-1] == OMOP_ID_SLOT
    with out.open(encoding="utf-8") as f:
        body = [line for line in f if not line.startswith("#")]
    rows = {r["subject_id"]: r for r in csv.DictReader(body, delimiter="\t")}
    assert (rows["p:G1"]["object_id"], rows["p:G1"][OMOP_ID_SLOT]) == ("LOINC:2345-7", "3004501")
    assert (rows["p:M1"]["object_id"], rows["p:M1"]["predicate_id"]) == (
        "SNOMEDCT:59621000",
        "skos:broadMatch",
    )
    assert rows["p:H1"][OMOP_ID_SLOT] == "320128"


def test_usagi_export_has_usagis_layout_and_statuses(decided: Path, tmp_path: Path) -> None:
    out = tmp_path / "p.usagi.csv"
    assert export("p", "usagi", out, db=decided, concepts=attributes).rows == 6
    with out.open(newline="", encoding="utf-8") as f:
        header = next(csv.reader(f))
    assert header == [*USAGI_COLUMNS[:4], "ADD_INFO:unit", *USAGI_COLUMNS[4:]]
    rows = {r["sourceCode"]: r for r in _read(out)}
    shown = {
        c: (r["mappingStatus"], r["equivalence"], r["conceptId"], r["statusSetBy"])
        for c, r in rows.items()
    }
    assert shown == {
        "G1": ("APPROVED", "EQUAL", "3004501", "ann"),
        "M1": ("APPROVED", "WIDER", "320128", "bob"),
        "H1": ("AUTO_MAPPED", "EQUAL", "320128", "cal"),
        "N1": ("APPROVED", "UNMATCHED", "0", "ann"),
        "F1": ("FLAGGED", "UNREVIEWED", "201826", "bob"),
        "P1": ("UNCHECKED", "UNREVIEWED", "201826", ""),
    }
    g1 = rows["G1"]
    assert (g1["ADD_INFO:unit"], g1["sourceFrequency"], g1["domainId"]) == (
        "mg/dL",
        "120",
        "Measurement",
    )
    assert (g1["comment"], float(g1["matchScore"])) == ("checked, mg/dL", pytest.approx(0.9))
    decided_at = _utc(_last("p", "G1", decided)["created_at"])
    assert int(g1["statusSetOn"]) == round(decided_at.timestamp() * 1000)
    assert (rows["P1"]["statusSetOn"], rows["P1"]["sourceFrequency"]) == ("0", "0")


def _decisions(project: str, db: Path, out: Path) -> dict[str, tuple[object, ...]]:
    """Each row's state and decision (concept, predicate, reviewer, time to the ms, comment)
    as the CSV export gives them."""
    export(project, "csv", out, db=db)
    table = {}
    for r in _read(out):
        at = r["decided_at"]
        ms = round(_utc(at).timestamp() * 1000) if at else None
        table[r["code"]] = (
            r["state"], r["concept_id"], r["predicate"], r["reviewer"], ms, r["comment"],
            r["top_concept_id"],
        )  # fmt: skip
    return table


def test_usagi_round_trip_keeps_every_decision(decided: Path, tmp_path: Path) -> None:
    first = tmp_path / "p.usagi.csv"
    export("p", "usagi", first, db=decided, concepts=attributes)
    db = tmp_path / "q.db"
    _project(tmp_path, db, "q", [r for r in ROWS if r[0] != "T1"])  # never run: to map
    report = import_usagi("q", first, db=db, concepts=resolve)
    assert (report.approved, report.auto_approved, report.no_match, report.flagged) == (2, 1, 1, 1)
    assert (report.suggested, report.unchanged, report.reviewers) == (1, 0, ["ann", "bob", "cal"])
    original = _decisions("p", decided, tmp_path / "p.csv")
    moved = _decisions("q", db, tmp_path / "q.csv")
    # the decisions, reviewers, times and comments all came across; P1's suggestion too
    assert {c: v[:6] for c, v in moved.items()} == {c: v[:6] for c, v in original.items()}
    assert moved["P1"][6] == original["P1"][6] == "OMOP:201826"
    # and once more: q's export imported into a third project gives q's decisions again
    second = tmp_path / "q.usagi.csv"
    export("q", "usagi", second, db=db, concepts=attributes)
    again = tmp_path / "r.db"
    _project(tmp_path, again, "r", [r for r in ROWS if r[0] != "T1"])
    import_usagi("r", second, db=again, concepts=resolve)
    assert _decisions("r", again, tmp_path / "r.csv") == moved


def _trail(project: str, db: Path) -> dict[str, tuple[str, int, list[dict[str, object]]]]:
    """Each row's state, version and whole audit trail."""
    codes = [r[0] for r in ROWS if r[0] != "T1"]
    views = {code: show_row(project, code, db=db) for code in codes}
    return {code: (v.state, v.version, v.decisions) for code, v in views.items()}


def test_reimporting_an_unmodified_usagi_export_leaves_the_audit_trail_unchanged(
    decided: Path, tmp_path: Path
) -> None:
    exported = tmp_path / "p.usagi.csv"
    export("p", "usagi", exported, db=decided, concepts=attributes)
    before = _trail("p", decided)
    assert sum(len(decisions) for _s, _v, decisions in before.values()) == 5
    for _ in range(2):  # export -> import -> import: nothing new, no new version
        report = import_usagi("p", exported, db=decided, concepts=resolve)
        counts = (report.approved, report.auto_approved, report.no_match, report.flagged)
        assert counts == (0, 0, 0, 0)
        assert (report.suggested, report.unchanged, report.reviewers) == (0, 6, [])
        assert _trail("p", decided) == before
    # a decision the file changes is still written, once, and replaces the current one
    changed = exported.read_text(encoding="utf-8").replace("checked, mg/dL", "fasting")
    (tmp_path / "changed.csv").write_text(changed, encoding="utf-8")
    assert import_usagi("p", tmp_path / "changed.csv", db=decided, concepts=resolve).approved == 1
    g1 = show_row("p", "G1", db=decided)
    assert (g1.version, [d["comment"] for d in g1.decisions]) == (
        before["G1"][1] + 1,
        ["checked, mg/dL", "fasting"],
    )


USAGI_HEADER = (
    "sourceCode,sourceName,sourceFrequency,sourceAutoAssignedConceptIds,ADD_INFO:unit,"
    "matchScore,mappingStatus,equivalence,statusSetBy,statusSetOn,conceptId,conceptName,"
    "domainId,mappingType,comment,createdBy,createdOn,assignedReviewer\n"
)


def _usagi(path: Path, *lines: str, header: str = USAGI_HEADER) -> Path:
    path.write_text(header + "".join(line + "\n" for line in lines), encoding="utf-8")
    return path


@pytest.fixture()
def fresh(tmp_path: Path) -> Path:
    """Project ``u`` with every row of ``ROWS`` still to map."""
    db = tmp_path / "u.db"
    _project(tmp_path, db, "u", ROWS)
    return db


def test_import_reads_a_usagi_file_as_usagi_writes_it(fresh: Path, tmp_path: Path) -> None:
    file = _usagi(
        tmp_path / "usagi.csv",
        "G1,gluc,120,,mg/dL,0.87,APPROVED,EQUAL,ann,1700000000123,3004501,Glucose,"
        "Measurement,MAPS_TO,fasting,ann,1700000000000,",
        "M1,heart attack,40,,,0.61,APPROVED,NARROWER,bob,1700000500000,4329847,MI,Condition,"
        "MAPS_TO,,bob,0,",
        "N1,zzqx,2,,,0.00,APPROVED,UNMATCHED,ann,1700000600000,0,,,MAPS_TO,,,0,",
        "P1,pending,0,,,0.55,UNCHECKED,UNREVIEWED,,0,201826,T2DM,Condition,MAPS_TO,,,0,",
        "T1,to map later,1,,,0.00,UNCHECKED,UNREVIEWED,,0,0,,,MAPS_TO,,,0,",
        "H1,htn,300,,,0.40,INVALID_TARGET,UNREVIEWED,,0,0,,,MAPS_TO,,,0,",
    )
    report = import_usagi("u", file, db=fresh, concepts=resolve)
    assert (report.codes, report.approved, report.no_match, report.suggested) == (6, 2, 1, 1)
    assert report.unchanged == 2  # T1 without a concept, H1 INVALID_TARGET
    assert show_row("u", "G1", db=fresh).state == "approved"
    g1 = _last("u", "G1", fresh)
    assert (g1["concept_id"], g1["reviewer"], g1["comment"]) == ("OMOP:3004501", "ann", "fasting")
    assert g1["concept_name"] == "Glucose [Mass/volume] in Serum or Plasma"  # the index's name
    assert g1["confidence"] == pytest.approx(0.87)
    assert _utc(g1["created_at"]) == datetime(2023, 11, 14, 22, 13, 20, 123000, timezone.utc)
    assert _last("u", "M1", fresh)["predicate"] == "narrow"
    p1 = show_row("u", "P1", db=fresh)
    assert p1.state == "to_review" and not p1.decisions
    assert [(c["concept_id"], c["score"], c["source"]) for c in p1.candidates] == [
        ("OMOP:201826", pytest.approx(0.55), "usagi")
    ]
    assert show_row("u", "T1", db=fresh).state == "to_map"


def test_import_names_the_default_reviewer_only_when_asked(fresh: Path, tmp_path: Path) -> None:
    old = _usagi(
        tmp_path / "old.csv",
        "G1,gluc,120,0.87,APPROVED,3004501,,",
        header="sourceCode,sourceName,sourceFrequency,matchScore,mappingStatus,conceptId,"
        "conceptName,comment\n",
    )
    with pytest.raises(InputFormatError, match=r"old.csv:2.*no statusSetBy.*--default-reviewer"):
        import_usagi("u", old, db=fresh, concepts=resolve)
    assert show_row("u", "G1", db=fresh).state == "to_map"
    assert import_usagi("u", old, db=fresh, concepts=resolve, default_reviewer="ann").approved == 1
    g1 = _last("u", "G1", fresh)
    assert (g1["reviewer"], g1["predicate"], g1["action"]) == ("ann", "exact", "pick")


BASE = "G1,gluc,120,,,0.87,APPROVED,EQUAL,ann,1700000000000,3004501,,,MAPS_TO,,,0,"


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ([BASE, "ZZ9,other,1,,,0.5,UNCHECKED,UNREVIEWED,,0,0,,,MAPS_TO,,,0,"],
         r"1 sourceCode\(s\) are no live row of project 'u': 'ZZ9' \(line 4\)"),
        (["G1,gluc,120,,,0.87,APPROVED,EQUAL,ann,0,999,,,MAPS_TO,,,0,"],
         r"usagi.csv:3: conceptId 999: no concept 'OMOP:999'"),
        (["G1,gluc,120,,,0.87,APPROVED,INEXACT,ann,0,3004501,,,MAPS_TO,,,0,"],
         r"usagi.csv:3: .*INEXACT has no termnorm predicate"),
        (["G1,gluc,120,,,0.87,DONE,EQUAL,ann,0,3004501,,,MAPS_TO,,,0,"],
         r"usagi.csv:3: mappingStatus 'DONE' is not one of APPROVED"),
        (["G1,gluc,120,,,high,APPROVED,EQUAL,ann,0,3004501,,,MAPS_TO,,,0,"],
         r"usagi.csv:3: matchScore 'high' is not a number"),
        ([BASE, "G1,gluc,120,,,0.87,APPROVED,EQUAL,ann,0,201826,,,MAPS_TO_VALUE,,,0,"],
         r"usagi.csv:4: code 'G1' has a second target concept \(3004501 on line 3"),
    ],
)  # fmt: skip
def test_import_refuses_a_bad_line_naming_it_and_writes_nothing(
    fresh: Path, tmp_path: Path, lines: list[str], message: str
) -> None:
    file = _usagi(
        tmp_path / "usagi.csv",
        "M1,heart attack,40,,,0.61,APPROVED,EQUAL,bob,0,4329847,,,MAPS_TO,,,0,",
        *lines,
    )
    with pytest.raises(InputFormatError, match=message):
        import_usagi("u", file, db=fresh, concepts=resolve)
    assert show_row("u", "M1", db=fresh).state == "to_map"  # the good line before: not written


def test_import_refuses_a_file_that_is_not_usagis(fresh: Path, tmp_path: Path) -> None:
    codes = write_codes(tmp_path / "codes.csv", ROWS)
    with pytest.raises(InputFormatError, match=r"no column sourceCode, matchScore.*a Usagi"):
        import_usagi("u", codes, db=fresh, concepts=resolve)


def test_import_reads_a_usagi_file_a_spreadsheet_saved_with_semicolons(
    fresh: Path, tmp_path: Path
) -> None:
    file = _usagi(
        tmp_path / "excel.csv",
        "G1;gluc;120;;mg/dL;0,87;APPROVED;EQUAL;ann;1700000000123;3004501;Glucose;"
        "Measurement;MAPS_TO;fasting, checked;ann;1700000000000;",
        "P1;pending;0;;;0,55;UNCHECKED;UNREVIEWED;;0;201826;T2DM;Condition;MAPS_TO;;;0;",
        header=USAGI_HEADER.replace(",", ";"),
    )
    report = import_usagi("u", file, db=fresh, concepts=resolve)
    assert (report.codes, report.approved, report.suggested) == (2, 1, 1)
    g1 = _last("u", "G1", fresh)
    assert (g1["concept_id"], g1["comment"]) == ("OMOP:3004501", "fasting, checked")
    assert g1["confidence"] == pytest.approx(0.87)  # the decimal comma read as a point
    p1 = show_row("u", "P1", db=fresh)
    assert [(c["concept_id"], c["score"]) for c in p1.candidates] == [
        ("OMOP:201826", pytest.approx(0.55))
    ]


def test_import_names_the_delimiter_it_read_a_header_with(fresh: Path, tmp_path: Path) -> None:
    header = USAGI_HEADER.replace(",", ";").replace("conceptId;", "concept;")
    file = _usagi(tmp_path / "excel.csv", "G1;gluc;120", header=header)
    with pytest.raises(
        InputFormatError,
        match=r"excel.csv:1: no column conceptId \(header read with "
        r"delimiter semicolon\)",
    ):
        import_usagi("u", file, db=fresh, concepts=resolve)
