"""``kg build --format loinc``: LOINC's Loinc.csv (the hand-written ``data/loinc/Loinc.csv``
in the 2.7x column layout: 16 rows, quoted commas, a value spanning two lines, a repeated
code, DEPRECATED / DISCOURAGED / TRIAL rows) → KG, and its axes through ``termnorm lookup``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from _cli import run_main
from termnorm.errors import InputFormatError
from termnorm.kg import KnowledgeGraph
from termnorm.kg.build import SourceSpec, build_kg_to_dir
from termnorm.kg.records import LoadReport

LOINC = Path(__file__).parent / "data" / "loinc" / "Loinc.csv"
ACTIVE = {
    "2345-7", "718-7", "4548-4", "2160-0", "6690-2", "8480-6", "1751-7", "2093-3", "1975-2",
    "3094-0", "2951-2", "24326-1",
}  # fmt: skip


def build(path: Path, out: Path, **options: object) -> tuple[KnowledgeGraph, LoadReport]:
    _, (report,) = build_kg_to_dir([SourceSpec("loinc", path, dict(options))], out)
    return KnowledgeGraph.load(out), report


def _codes(kg: KnowledgeGraph) -> set[str]:
    return {c.removeprefix("LOINC:") for c in kg.concepts["concept_id"]}


def test_active_codes_kept_the_others_counted_by_status(tmp_path: Path) -> None:
    kg, report = build(LOINC, tmp_path / "kg")
    assert _codes(kg) == ACTIVE
    assert report.read["concepts"] == 16
    assert report.dropped["concept: status DEPRECATED not selected (include_status)"] == 1
    assert report.dropped["concept: status DISCOURAGED not selected (include_status)"] == 1
    assert report.dropped["concept: status TRIAL not selected (include_status)"] == 1
    assert report.dropped["concept: repeated LOINC_NUM"] == 1
    assert kg.card["counts"]["concepts"] == report.kept["concepts"] == 12
    assert kg.card["counts"]["relations"] == 0
    everything, _ = build(LOINC, tmp_path / "all", include_status="deprecated,DISCOURAGED,TRIAL")
    assert _codes(everything) == ACTIVE | {"1554-5", "11555-0", "98979-8"}
    statuses = everything.concepts.set_index("concept_id")["attributes"].map(lambda a: a["status"])
    assert statuses["LOINC:1554-5"] == "DEPRECATED"
    assert statuses["LOINC:98979-8"] == "TRIAL"
    with pytest.raises(ValueError, match=r"unknown LOINC status RETIRED .*known: ACTIVE, TRIAL"):
        build(LOINC, tmp_path / "bad", include_status=("RETIRED",))


def test_names_and_related_names_are_terms(tmp_path: Path) -> None:
    kg, report = build(LOINC, tmp_path / "kg")
    glucose = kg.terms[kg.terms["concept_id"] == "LOINC:2345-7"]
    terms = list(zip(glucose["term"], glucose["source"], glucose["is_preferred"], strict=True))
    assert terms[:4] == [
        ("Glucose [Mass/volume] in Serum or Plasma", "LOINC:LONG_COMMON_NAME", True),
        ("Glucose SerPl-mCnc", "LOINC:SHORTNAME", False),
        ("Glucose [Mass/Vol]", "LOINC:DisplayName", False),
        ("Glucose, Serum or Plasma", "LOINC:CONSUMER_NAME", False),  # a quoted comma
    ]
    related = [t for t, source, _ in terms if source == "LOINC:RELATEDNAMES2"]
    assert related[:3] == ["Gluc", "Glu", "Level"]
    assert len(related) == 12
    panel = kg.terms[kg.terms["concept_id"] == "LOINC:24326-1"]["term"].tolist()
    assert "Sodium, potassium, chloride and bicarbonate panel" in panel  # one entry, commas in
    # "Hb"/"HGB" repeat case-insensitively; the row after the two-line definition is read
    assert report.dropped["term: duplicate (case-insensitive)"] == 4
    assert kg.concepts.set_index("concept_id").loc["LOINC:2951-2", "name"] == (
        "Sodium [Moles/volume] in Serum or Plasma"
    )


def test_axes_class_and_status_are_attributes(tmp_path: Path) -> None:
    kg, _ = build(LOINC, tmp_path / "kg")
    concepts = kg.concepts.set_index("concept_id")
    axes = ["component", "property", "time_aspect", "system", "scale_type", "method_type"]
    values = ["Leukocytes", "NCnc", "Pt", "Bld", "Qn", "Automated count"]
    expected = {**dict(zip(axes, values, strict=True)), "class": "HEM/BC"}
    expected |= {"class_type": "Laboratory", "status": "ACTIVE"}
    assert concepts.loc["LOINC:6690-2", "attributes"] == expected
    assert concepts.loc["LOINC:6690-2", "semantic_types"] == ["HEM/BC"]
    assert concepts.loc["LOINC:8480-6", "attributes"]["class_type"] == "Clinical"
    assert concepts.loc["LOINC:2345-7", "attributes"]["method_type"] == ""  # methodless


def test_file_or_release_folder(tmp_path: Path) -> None:
    table = tmp_path / "Loinc_2.76" / "LoincTable"
    table.mkdir(parents=True)
    shutil.copy(LOINC, table / "Loinc.csv")
    from_folder, report = build(tmp_path / "Loinc_2.76", tmp_path / "a")
    assert report.info["file"] == str(table / "Loinc.csv")
    from_file, _ = build(LOINC.parent, tmp_path / "b")
    assert from_folder.fingerprint == from_file.fingerprint
    with pytest.raises(InputFormatError, match=r"no Loinc\.csv here nor in LoincTable/"):
        build(tmp_path, tmp_path / "c")


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ('"2339-0","Glucose","MCnc"', r"Loinc\.csv:19: expected 41 columns, got 3"),
        ('"2339_0"' + ',""' * 40, r"Loinc\.csv:19: LOINC_NUM '2339_0' is not a LOINC code"),
    ],
)
def test_malformed_row_names_file_and_line(tmp_path: Path, row: str, message: str) -> None:
    path = Path(shutil.copy(LOINC, tmp_path / "Loinc.csv"))
    with open(path, "a", encoding="utf-8", newline="") as handle:
        handle.write(row + "\r\n")  # line 19: 16 rows, one of them on two lines
    with pytest.raises(InputFormatError, match=message):
        build(path, tmp_path / "kg")
    assert not (tmp_path / "kg").exists()  # atomic: nothing half-written


def test_missing_column_is_named(tmp_path: Path) -> None:
    path = tmp_path / "Loinc.csv"
    path.write_text('"LOINC_NUM","COMPONENT"\n"2345-7","Glucose"\n', encoding="utf-8")
    with pytest.raises(InputFormatError, match=r"Loinc\.csv:1: no column PROPERTY, TIME_ASPCT"):
        build(path, tmp_path / "kg")


def test_cli_build_index_and_lookup_show_the_axes(
    tmp_path: Path, tiny_bert_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kg_dir, index = tmp_path / "kg", tmp_path / "idx"
    args = ["kg", "build", str(LOINC), "--include-status", "TRIAL"]  # format from the name
    code, out, err = run_main([*args, "--out", str(kg_dir), "--json"], capsys)
    assert code == 0, err
    card = json.loads(out)
    assert card["sources"][0]["options"] == {"include_status": ["TRIAL"]}
    assert card["counts"]["concepts"] == 13
    assert card["fingerprint"] == KnowledgeGraph.load(kg_dir).fingerprint
    args = ["index", "build", "--kg", str(kg_dir), "--model", str(tiny_bert_path)]
    code, _, err = run_main([*args, "--backend", "exact", "--out", str(index)], capsys)
    assert code == 0, err
    code, out, err = run_main(["lookup", "LOINC:6690-2", "--index", str(index)], capsys)
    assert code == 0, err
    for line in ("component: Leukocytes", "time_aspect: Pt", "method_type: Automated count"):
        assert line in out
    code, out, err = run_main(["lookup", "LOINC:98979-8", "--index", str(index), "--json"], capsys)
    assert code == 0, err
    (info,) = json.loads(out)
    assert info["attributes"]["status"] == "TRIAL"
    assert "eGFR" in {s["term"] for s in info["synonyms"]}
