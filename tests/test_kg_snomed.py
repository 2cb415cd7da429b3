"""``kg build --format snomed``: a SNOMED CT RF2 Snapshot (the hand-written release under
``data/snomed_rf2``: 21 concept rows, 48 description rows, US and GB language refsets, 26
relationship rows) → KG, versions resolved by effectiveTime, the refset deciding the
preferred term."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from _cli import run_main
from termnorm.errors import InputFormatError
from termnorm.kg import KnowledgeGraph
from termnorm.kg.build import SourceSpec, build_kg_to_dir
from termnorm.kg.graph import table_fingerprint
from termnorm.kg.records import LoadReport
from termnorm.kg.snomed import GB_ENGLISH, relation_label, split_tag

RELEASE = (
    Path(__file__).parent / "data" / "snomed_rf2" / "SnomedCT_TestRF2_PRODUCTION_20240101T120000Z"
)
TERMINOLOGY = RELEASE / "Snapshot" / "Terminology"
DESCRIPTIONS = TERMINOLOGY / "sct2_Description_Snapshot-en_INT_20240101.txt"
ACTIVE = {
    138875005, 404684003, 64572001, 271737000, 87522002, 123037004, 14016003, 363698007,
    116680003, 410662002, 73211009, 44054006, 113331007, 362969004, 80146002, 66754008,
}  # fmt: skip


def build(folder: Path, out: Path, **options: object) -> tuple[KnowledgeGraph, LoadReport]:
    _, (report,) = build_kg_to_dir([SourceSpec("snomed", folder, dict(options))], out)
    return KnowledgeGraph.load(out), report


def _dropped(report: LoadReport, kind: str) -> dict[str, int]:
    """The report's drops of one record kind, without the ``kind: `` prefix."""
    prefix = f"{kind}: "
    return {k.removeprefix(prefix): n for k, n in report.dropped.items() if k.startswith(prefix)}


def _terms(kg: KnowledgeGraph, sctid: int) -> list[tuple[str, str, bool]]:
    rows = kg.terms[kg.terms["concept_id"] == f"SNOMEDCT:{sctid}"]
    return list(zip(rows["term"], rows["source"], rows["is_preferred"], strict=True))


@pytest.fixture(scope="module")
def us(tmp_path_factory: pytest.TempPathFactory) -> tuple[KnowledgeGraph, LoadReport]:
    return build(RELEASE, tmp_path_factory.mktemp("snomed") / "kg")


def test_latest_active_rows_win(us: tuple[KnowledgeGraph, LoadReport]) -> None:
    kg, report = us
    assert {int(c.split(":")[1]) for c in kg.concepts["concept_id"]} == ACTIVE
    assert report.read["concept rows"] == 21
    # 87522002 and 10000006 have two rows; 10000006's later one inactivates it, as 3723001 is;
    # the model component has no active description
    assert _dropped(report, "concept") == {
        "superseded by a later row of its id": 2,
        "inactive": 2,
        "no active FSN or synonym": 1,
    }
    assert _dropped(report, "description") == {
        "concept inactive or absent": 3,
        "superseded by a later row of its id": 1,
        "inactive": 2,
    }
    assert kg.card["counts"]["concepts"] == report.kept["concepts"] == 16
    concepts = kg.concepts.set_index("concept_id")
    assert concepts.loc["SNOMEDCT:87522002", "attributes"] == {
        "module_id": "900000000000207008",
        "definition_status": "defined",  # its later row
    }
    assert concepts.loc["SNOMEDCT:116680003", "attributes"]["definition_status"] == "primitive"


def test_us_refset_decides_the_preferred_term(us: tuple[KnowledgeGraph, LoadReport]) -> None:
    kg, report = us
    concepts = kg.concepts.set_index("concept_id")
    assert concepts.loc["SNOMEDCT:271737000", "name"] == "Anemia"
    assert concepts.loc["SNOMEDCT:271737000", "semantic_types"] == ["disorder"]
    assert concepts.loc["SNOMEDCT:14016003", "semantic_types"] == ["body structure"]
    assert _terms(kg, 271737000) == [
        ("Anemia", "SNOMEDCT:PT", True),
        ("Anaemia", "SNOMEDCT:not-in-refset", False),
    ]  # the FSN without its tag repeats the PT
    assert _terms(kg, 87522002) == [
        ("Iron deficiency anemia", "SNOMEDCT:PT", True),
        ("IDA - Iron deficiency anemia", "SNOMEDCT:SY", False),
        ("Iron deficiency anaemia", "SNOMEDCT:not-in-refset", False),
    ]  # "Anemia due to iron deficiency" was inactivated by a later row
    assert _terms(kg, 113331007) == [
        ("Endocrine system structure", "SNOMEDCT:PT", True),
        ("Structure of endocrine system", "SNOMEDCT:FSN", False),
    ]
    # only the GB refset lists 410662002's descriptions: named by its FSN, counted
    assert _terms(kg, 410662002) == [("Concept model attribute", "SNOMEDCT:FSN", True)]
    assert report.notes["concepts without a preferred synonym in the language refset"] == 1
    assert report.dropped["language refset: another refset (not language_refset)"] == 45
    assert report.dropped["term: duplicate (case-insensitive)"] == 14


def test_language_refset_switches_the_preferred_term(
    us: tuple[KnowledgeGraph, LoadReport], tmp_path: Path
) -> None:
    gb, report = build(RELEASE, tmp_path / "gb", language_refset=GB_ENGLISH)
    names = gb.concepts.set_index("concept_id")["name"]
    assert names["SNOMEDCT:271737000"] == "Anaemia"
    assert names["SNOMEDCT:80146002"] == "Appendicectomy"
    assert names["SNOMEDCT:87522002"] == "Iron deficiency anaemia"
    assert _terms(gb, 271737000) == [
        ("Anaemia", "SNOMEDCT:PT", True),
        ("Anemia", "SNOMEDCT:SY", False),
    ]
    assert "concepts without a preferred synonym in the language refset" not in report.notes
    assert gb.fingerprint != us[0].fingerprint


def test_is_a_hierarchy_and_attribute_relations(us: tuple[KnowledgeGraph, LoadReport]) -> None:
    kg, report = us
    edges = {(h.split(":")[1], r, t.split(":")[1]) for h, r, t in kg.relations.values.tolist()}
    attributes = {e for e in edges if e[1] != "is_a"}
    assert attributes == {
        ("271737000", "finding_site", "14016003"),
        ("87522002", "finding_site", "14016003"),  # once, though in two role groups
        ("362969004", "finding_site", "113331007"),
        ("80146002", "405813007", "66754008"),  # the type concept is not in the release
    }
    is_a = {(h, t) for h, r, t in edges if r == "is_a"}
    assert ("87522002", "271737000") in is_a and ("271737000", "64572001") in is_a
    assert ("44054006", "73211009") in is_a
    assert not {("44054006", "64572001"), ("73211009", "64572001")} & is_a  # later / inactive
    assert len(is_a) == 15
    assert report.read["relationship rows"] == 26
    assert _dropped(report, "relationship") == {
        "superseded by a later row of its id": 1,
        "inactive": 2,
        "source concept inactive or absent": 1,
        "destination concept inactive or absent": 2,
        "repeat (another role group)": 1,
    }  # 26 rows = 19 kept + 7 dropped
    assert report.notes["relationship types not in the release (named by typeId)"] == 1
    assert report.kept["relations"] == kg.card["counts"]["relations"] == 19


@pytest.mark.parametrize("folder", [RELEASE, RELEASE / "Snapshot", TERMINOLOGY])
def test_release_snapshot_or_terminology_folder(
    us: tuple[KnowledgeGraph, LoadReport], folder: Path, tmp_path: Path
) -> None:
    kg, report = build(folder, tmp_path / "kg")
    assert kg.fingerprint == us[0].fingerprint
    assert Path(report.info["language refset"]).parent.name == "Language"


def test_helpers() -> None:
    assert split_tag("Anemia (disorder)") == ("Anemia", "disorder")
    assert split_tag("SNOMED CT Concept (SNOMED RT+CTV3)") == (
        "SNOMED CT Concept",
        "SNOMED RT+CTV3",
    )
    assert split_tag("No tag") == ("No tag", "")
    assert relation_label("Finding site") == "finding_site"
    assert relation_label("Procedure site - Direct") == "procedure_site_direct"


@pytest.fixture()
def release_copy(tmp_path: Path) -> Path:
    return Path(shutil.copytree(RELEASE, tmp_path / "release"))


def test_missing_or_ambiguous_files_are_refused_by_name(release_copy: Path, tmp_path: Path) -> None:
    terminology = release_copy / "Snapshot" / "Terminology"
    concept = terminology / "sct2_Concept_Snapshot_INT_20240101.txt"
    shutil.copy(concept, terminology / "sct2_Concept_Snapshot_INT_20230731.txt")
    with pytest.raises(InputFormatError, match=r"2 files match sct2_Concept_Snapshot\* \("):
        build(release_copy, tmp_path / "kg")
    (terminology / "sct2_Concept_Snapshot_INT_20230731.txt").unlink()
    (terminology / "sct2_Relationship_Snapshot_INT_20240101.txt").unlink()
    with pytest.raises(InputFormatError, match=r"no sct2_Relationship_Snapshot_\*\.txt file"):
        build(release_copy, tmp_path / "kg")
    with pytest.raises(InputFormatError, match="not a folder"):
        build(concept, tmp_path / "kg")
    assert not (tmp_path / "kg").exists()


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("1\t20240101\t1\t900000000000207008\t271737000\ten\t900000000000013009\tLow Hb\r\n",
         r"expected 9 columns, got 8"),
        ("2\t20240101\t1\t900000000000207008\tx27\ten\t900000000000013009\tLow Hb\t0\r\n",
         r"conceptid is not an integer: 'x27'"),
    ],
)  # fmt: skip
def test_malformed_row_names_file_and_line(
    release_copy: Path, tmp_path: Path, line: str, message: str
) -> None:
    descriptions = release_copy / "Snapshot" / "Terminology" / DESCRIPTIONS.name
    with open(descriptions, "a", encoding="utf-8", newline="") as handle:
        handle.write(line)
    name = DESCRIPTIONS.name.replace(".", r"\.")
    with pytest.raises(InputFormatError, match=rf"{name}:50: {message}"):
        build(release_copy, tmp_path / "kg")
    assert not (tmp_path / "kg").exists()  # atomic: nothing half-written


def test_unknown_language_refset(tmp_path: Path) -> None:
    with pytest.raises(InputFormatError, match=r"no row of language refset 123 \(found: "):
        build(RELEASE, tmp_path / "kg", language_refset="123")
    with pytest.raises(ValueError, match="must be an SCTID"):
        build(RELEASE, tmp_path / "kg", language_refset="GB")


def test_cli_builds_with_a_card(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "kg"
    args = ["kg", "build", str(RELEASE), "--format", "snomed", "--out", str(out)]
    code, stdout, err = run_main([*args, "--language-refset", GB_ENGLISH, "--json"], capsys)
    assert code == 0, err
    card = json.loads(stdout)
    assert card["sources"][0]["options"] == {"language_refset": GB_ENGLISH}
    assert card["counts"] == {"concepts": 16, "terms": 28, "relations": 19, "relation_labels": 3}
    assert card["fingerprint"] == table_fingerprint(out)
    assert json.loads((out / "kg.json").read_text())["fingerprint"] == card["fingerprint"]
    args[-1] = str(tmp_path / "other")
    code, _, err = run_main([*args, "--include-status", "TRIAL"], capsys)
    assert code != 0
    assert "--include-status does not apply" in err
    inferred = ["kg", "build", str(RELEASE / "Snapshot"), "--out", str(tmp_path / "inferred")]
    code, stdout, err = run_main([*inferred, "--json"], capsys)  # no --format: an RF2 folder
    assert code == 0, err
    assert json.loads(stdout)["sources"][0]["format"] == "snomed"
