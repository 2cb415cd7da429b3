"""``kg build --format fhir``: FHIR CodeSystems (R4 nested, R5 with parent properties,
NDJSON, Bundles) → KG, validated with ``fhir.resources``; other resources refused by name;
then an index and a lookup."""

from __future__ import annotations

import gzip
import json
import shutil
import sys
from pathlib import Path

import pytest

from _cli import run_main
from termnorm.errors import InputFormatError, MissingExtraError
from termnorm.index import TermIndex
from termnorm.kg import KnowledgeGraph
from termnorm.kg.build import SourceSpec, build_kg_to_dir
from termnorm.kg.fhir import codesystem_version
from termnorm.kg.fhir_systems import FhirVersion, prefix_of_system, system_of_prefix
from termnorm.kg.records import LoadReport

pytest.importorskip("fhir.resources", reason="needs the fhir extra")

DATA = Path(__file__).parent / "data" / "fhir"


def build(path: Path, out: Path, **options: object) -> tuple[KnowledgeGraph, LoadReport]:
    _, (report,) = build_kg_to_dir([SourceSpec("fhir", path, dict(options))], out)
    return KnowledgeGraph.load(out), report


def _terms(kg: KnowledgeGraph, concept_id: str) -> set[tuple[str, str, str]]:
    rows = kg.terms[kg.terms["concept_id"] == concept_id]
    return {(r.term, r.lang, r.source) for r in rows.itertuples()}


def _edges(kg: KnowledgeGraph) -> set[tuple[str, str]]:
    assert set(kg.relations["relation"]) <= {"is_a"}
    return set(zip(kg.relations["head"], kg.relations["tail"], strict=True))


def test_r4_nested_concepts_designations_and_retired(tmp_path: Path) -> None:
    kg, report = build(DATA / "r4_nested.json", tmp_path / "kg", prefix="HOSP")
    ids = set(kg.concepts["concept_id"])
    assert ids == {"HOSP:DM", "HOSP:T2DM", "HOSP:T2DM-K", "HOSP:T1DM", "HOSP:HTN"}
    assert report.read["concepts"] == 6 and report.kept["concepts"] == 5
    assert report.dropped["concept: status retired"] == 1  # T1DM-OLD
    assert report.kept["terms"] == len(kg.terms) == 11
    assert _terms(kg, "HOSP:DM") == {
        ("Diabetes mellitus", "en", "fhir:display"),
        ("Zuckerkrankheit", "de", "fhir:designation:900000000000013009"),
        ("Sugar diabetes", "en", "fhir:designation:synonym"),
    }
    t2 = _terms(kg, "HOSP:T2DM")  # the case-insensitive repeat of the display is dropped
    assert report.dropped["term: duplicate (case-insensitive)"] == 1
    assert ("Diabetes mellitus Typ 2", "de", "fhir:designation") in t2 and len(t2) == 3
    preferred = kg.terms[kg.terms["is_preferred"]]
    assert set(preferred["term"]) == set(kg.concepts["name"])
    # nesting is the hierarchy; the child of the retired concept loses that edge, counted
    assert _edges(kg) == {("HOSP:T2DM", "HOSP:DM"), ("HOSP:T2DM-K", "HOSP:T2DM")}
    assert report.dropped["relation is_a: endpoint not a kept concept"] == 2
    attributes = kg.concepts.set_index("concept_id")["attributes"]
    assert attributes["HOSP:DM"] == {
        "definition": "A metabolic disorder of high blood glucose.",
        "billable": "false",
        "chapter": "E",
    }
    assert attributes["HOSP:T2DM"] == {"billable": "true", "chapter": "E; IV"}
    assert "R4" in report.info["CodeSystem http://example.org/fhir/CodeSystem/hospital-conditions"]
    assert kg.card["counts"]["concepts"] == 5 and kg.card["fingerprint"]


@pytest.mark.parametrize(
    ("count", "content", "warned"),
    [(6, "complete", False), (9, "complete", True), (9, "fragment", False)],
)
def test_a_complete_codesystem_holding_fewer_concepts_than_its_count_is_warned(
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    count: int,
    content: str,
    warned: bool,
) -> None:
    resource = json.loads((DATA / "r4_nested.json").read_text(encoding="utf-8"))
    file = tmp_path / "cs.json"
    file.write_text(json.dumps({**resource, "count": count, "content": content}), "utf-8")
    _, report = build(file, tmp_path / "kg", prefix="HOSP")
    assert report.read["concepts"] == 6  # nested ones included
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    expected = (
        f"{file}: CodeSystem http://example.org/fhir/CodeSystem/hospital-conditions has "
        "count 9 but holds 6 concepts: the list may be cut short"
    )
    assert warnings == ([expected] if warned else [])


def test_include_inactive_keeps_the_retired_concept(tmp_path: Path) -> None:
    kg, report = build(
        DATA / "r4_nested.json", tmp_path / "kg", prefix="HOSP", include_inactive=True
    )
    assert "HOSP:T1DM-OLD" in set(kg.concepts["concept_id"])
    assert dict(report.dropped) == {"term: duplicate (case-insensitive)": 1}
    assert ("HOSP:T1DM", "HOSP:T1DM-OLD") in _edges(kg)
    old = kg.concepts.set_index("concept_id").loc["HOSP:T1DM-OLD", "attributes"]
    assert old == {"status": "retired"}


def test_r5_parent_and_child_properties_and_known_system(tmp_path: Path) -> None:
    kg, report = build(DATA / "r5_parent.json", tmp_path / "kg")
    assert set(kg.concepts["concept_id"]) == {
        "SNOMEDCT:64572001", "SNOMEDCT:73211009", "SNOMEDCT:44054006", "SNOMEDCT:38341003",
    }  # fmt: skip
    assert report.dropped["concept: inactive"] == 1  # 190368000
    assert _edges(kg) == {
        ("SNOMEDCT:73211009", "SNOMEDCT:64572001"),  # parent, and the 'kids' child property
        ("SNOMEDCT:44054006", "SNOMEDCT:73211009"),
        ("SNOMEDCT:38341003", "SNOMEDCT:64572001"),
    }
    assert report.dropped["relation is_a: duplicate"] == 1
    # 44054006 -> 999999999 (absent) and 190368000 (inactive) -> 44054006
    assert report.dropped["relation is_a: endpoint not a kept concept"] == 2
    assert ("diabète de type 2", "fr", "fhir:designation") in _terms(kg, "SNOMEDCT:44054006")
    attributes = kg.concepts.set_index("concept_id")["attributes"]
    assert attributes["SNOMEDCT:64572001"] == {"moduleId": "900000000000207008"}
    assert "FHIR R5" in report.info["CodeSystem http://snomed.info/sct"]


def test_ndjson_with_two_codesystems_and_a_bundle(tmp_path: Path) -> None:
    kg, report = build(DATA / "two.ndjson", tmp_path / "kg")
    assert set(kg.concepts["concept_id"]) == {
        "LOINC:4548-4",
        "LOINC:2345-7",
        "ICD10:E11",
        "ICD10:E11.9",
    }
    assert report.read["CodeSystem resources"] == 2
    assert ("HbA1c MFr Bld", "en", "fhir:designation:SHORTNAME") in _terms(kg, "LOINC:4548-4")
    assert _edges(kg) == {("ICD10:E11.9", "ICD10:E11")}
    bundle, report = build(DATA / "bundle.json", tmp_path / "bundle")
    assert set(bundle.concepts["concept_id"]) == {"LOINC:2345-7", "UCUM:mg/dL"}
    assert report.read["Bundle resources"] == 1 and report.read["CodeSystem resources"] == 2


def test_a_folder_and_gzip_read_alike(tmp_path: Path) -> None:
    folder = tmp_path / "cs"
    folder.mkdir()
    shutil.copy(DATA / "r5_parent.json", folder / "a.json")
    with gzip.open(folder / "b.ndjson.gz", "wt", encoding="utf-8") as f:
        f.write((DATA / "two.ndjson").read_text(encoding="utf-8"))
    (folder / "notes.txt").write_text("not read")
    kg, report = build(folder, tmp_path / "kg")
    assert len(kg.concepts) == 8 and report.read["CodeSystem resources"] == 3


@pytest.mark.parametrize(
    ("name", "line", "message"),
    [
        ("valueset.json", None, r"found resourceType 'ValueSet', not a CodeSystem"),
        ("patients.ndjson", 2, r"Bundle entry 1 holds a Patient resource, not a CodeSystem"),
        (
            "invalid.json",
            None,
            r"CodeSystem http://example.org/fhir/CodeSystem/broken is not a valid FHIR R4 "
            r"CodeSystem: concept.0.code: Value for the field 'code' is required.",
        ),
    ],
)
def test_other_resources_and_invalid_codesystems_name_the_file(
    tmp_path: Path, name: str, line: int | None, message: str
) -> None:
    with pytest.raises(InputFormatError, match=message) as error:
        build(DATA / name, tmp_path / "kg", prefix="X")
    assert (error.value.path, error.value.line) == (DATA / name, line)
    assert str(error.value).startswith(f"{DATA / name}{'' if line is None else f':{line}'}: ")
    assert not (tmp_path / "kg").exists()  # atomic: nothing written


def test_unknown_system_needs_a_prefix_and_bad_json_names_its_line(tmp_path: Path) -> None:
    with pytest.raises(
        InputFormatError, match=r"hospital-conditions' is not a code system .*--prefix"
    ):
        build(DATA / "r4_nested.json", tmp_path / "kg")
    lines = (DATA / "two.ndjson").read_text().splitlines()
    broken = tmp_path / "broken.ndjson"
    broken.write_text("\n".join([lines[0], "", '{"resourceType": "CodeSystem",']) + "\n")
    with pytest.raises(InputFormatError, match=r"broken.ndjson:3: not JSON"):
        build(broken, tmp_path / "kg")
    several = tmp_path / "several.json"
    several.write_text((DATA / "two.ndjson").read_text())
    with pytest.raises(InputFormatError, match=r"several.json:3: not JSON: Extra data.*\.ndjson"):
        build(several, tmp_path / "kg")


def test_version_detection_and_an_r5_field_refused_as_r4(tmp_path: Path) -> None:
    r5 = json.loads((DATA / "r5_parent.json").read_text())
    r4 = json.loads((DATA / "r4_nested.json").read_text())
    assert codesystem_version(r5, None) is FhirVersion.R5  # copyrightLabel
    assert codesystem_version(r4, None) is FhirVersion.R4  # meta.profile |4.0.1
    r4["meta"]["profile"] = ["http://hl7.org/fhir/StructureDefinition/CodeSystem|4.3.0"]
    assert codesystem_version(r4, None) is FhirVersion.R4B
    assert codesystem_version({"resourceType": "CodeSystem"}, None) is FhirVersion.R4
    assert codesystem_version(r5, FhirVersion("r4b")) is FhirVersion.R4B
    with pytest.raises(InputFormatError, match=r"not a valid FHIR R4B CodeSystem: copyrightLabel"):
        build(DATA / "r5_parent.json", tmp_path / "kg", fhir_version="R4B")
    kg, report = build(DATA / "r5_parent.json", tmp_path / "kg", fhir_version="R4B", validate=False)
    assert (
        len(kg.concepts) == 4
        and "(not validated)" in report.info["CodeSystem http://snomed.info/sct"]
    )


def test_without_the_extra_the_error_names_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "fhir.resources.R4B.codesystem", None)  # import fails
    with pytest.raises(MissingExtraError, match=r"pip install 'termnorm\[fhir\]'"):
        build(DATA / "two.ndjson", tmp_path / "kg")
    kg, _ = build(DATA / "two.ndjson", tmp_path / "kg", validate=False)  # no model needed
    assert len(kg.concepts) == 4


def test_system_table_runs_both_ways() -> None:
    assert prefix_of_system("http://snomed.info/sct") == "SNOMEDCT"
    assert prefix_of_system("http://loinc.org/|2.77") == "LOINC"
    assert prefix_of_system("http://example.org/cs") is None
    assert system_of_prefix("ICD10") == "http://hl7.org/fhir/sid/icd-10"
    assert system_of_prefix("LOCAL") is None


def test_cli_build_then_index_then_lookup(
    tmp_path: Path, tiny_bert_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kg_dir = tmp_path / "kg"
    args = ["kg", "build", str(DATA / "r4_nested.json"), "--format", "fhir", "--prefix", "HOSP"]
    code, out, err = run_main([*args, "--include-inactive", "--out", str(kg_dir), "--json"], capsys)
    assert code == 0, err
    card = json.loads(out)
    assert card["sources"][0]["options"]["prefix"] == "HOSP"
    assert card["sources"][0]["options"]["include_inactive"] is True
    assert card["counts"]["concepts"] == 6
    code, _, err = run_main(
        ["kg", "build", str(DATA / "r5_parent.json"), "-f", "fhir", "--fhir-version", "R4",
         "--out", str(tmp_path / "r4")], capsys,
    )  # fmt: skip
    assert code != 0 and "not a valid FHIR R4 CodeSystem: copyrightLabel" in err
    index = tmp_path / "idx"
    args = ["index", "build", "--kg", str(kg_dir), "--model", str(tiny_bert_path)]
    code, _, err = run_main([*args, "--backend", "exact", "--out", str(index)], capsys)
    assert code == 0, err
    assert TermIndex.load(index).concept("HOSP:T2DM").name == "Type 2 diabetes mellitus"
    code, out, err = run_main(["lookup", "HOSP:DM", "--index", str(index), "--json"], capsys)
    assert code == 0, err
    (info,) = json.loads(out)
    assert info["attributes"]["billable"] == "false"
    assert ("Zuckerkrankheit", "fhir:designation:900000000000013009") in {
        (s["term"], s["source"]) for s in info["synonyms"]
    }
    query = ["normalize", "Zuckerkrankheit", "--index", str(index), "--json", "-k", "1"]
    code, out, err = run_main(query, capsys)
    assert code == 0, err
    (row,) = json.loads(out)
    assert row["candidates"][0]["concept_id"] == "HOSP:DM"
