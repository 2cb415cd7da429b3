"""``map export --format fhir``: a FHIR ConceptMap, R4B by default and R5 on request,
validated by the ``fhir.resources`` models, with the systems, codes, equivalences or
relationships, comments and reviewers of the project's decisions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from _cli import run_main
from termnorm.projects import decide, export
from termnorm.projects.exports.fhir import EXTENSION_BASE
from test_projects_export import decided  # noqa: F401 (the fixture: one row of each kind)

pytest.importorskip("fhir.resources", reason="needs the fhir extra")

SNOMED = {"SNOMEDCT:44054006": ("SNOMEDCT:44054006", "Diabetes mellitus type 2")}.__getitem__
FALLBACK = "https://w3id.org/termnorm/projects/concepts/T"  # T: not a known FHIR system


@pytest.fixture()
def with_snomed(decided: Path) -> Path:  # noqa: F811
    """The ``decided`` project with the flagged row A6 mapped to a narrower SNOMED concept."""
    decide(
        "p", "A6", "pick", concept_id="SNOMEDCT:44054006", predicate="narrow", reviewer="cy",
        concepts=SNOMED, db=decided,
    )  # fmt: skip
    return decided


def _elements(conceptmap: dict[str, Any]) -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
    """Source code → (its group without elements, its element)."""
    out = {}
    for group in conceptmap["group"]:
        head = {k: v for k, v in group.items() if k != "element"}
        out.update({element["code"]: (head, element) for element in group["element"]})
    return out


def _value(item: dict[str, Any]) -> Any:
    (value,) = [v for k, v in item.items() if k.startswith("value")]
    return value


def _extensions(target: dict[str, Any]) -> dict[str, Any]:
    """The target's (or element's) extensions by name (the URL after EXTENSION_BASE)."""
    return {e["url"].removeprefix(EXTENSION_BASE): _value(e) for e in target["extension"]}


def test_r4b_conceptmap_validates_with_equivalences_and_reviewers(
    with_snomed: Path, tmp_path: Path
) -> None:
    from fhir.resources.R4B.conceptmap import ConceptMap

    out = tmp_path / "p.conceptmap.json"
    assert export("p", "fhir", out, db=with_snomed).rows == 5  # A1, A 2, A3, A6; A4 no match
    data = json.loads(out.read_text())
    ConceptMap.model_validate(data)
    assert (data["resourceType"], data["status"], data["name"]) == (
        "ConceptMap",
        "draft",
        "PMappings",
    )
    elements = _elements(data)
    assert set(elements) == {"A1", "A 2", "A3", "A6", "A4"}  # not retired A5
    group, a1 = elements["A1"]
    assert group == {"source": "urn:termnorm:project:p", "target": FALLBACK}
    (t1,) = a1["target"]
    assert (a1["display"], t1["code"], t1["display"], t1["equivalence"]) == (
        "heart attack", "0001", "c1", "equivalent",
    )  # fmt: skip
    assert t1["comment"] == "checked"
    assert _extensions(t1)["reviewer"] == "ann" and "confidence" not in _extensions(t1)
    (t2,) = elements["A 2"][1]["target"]
    assert (t2["code"], t2["equivalence"], _extensions(t2)["reviewer"]) == ("0002", "wider", "bob")
    (t3,) = elements["A3"][1]["target"]
    assert _extensions(t3)["confidence"] == pytest.approx(1.0)
    group, a6 = elements["A6"]
    assert group["target"] == "http://snomed.info/sct"
    (t6,) = a6["target"]
    assert (t6["code"], t6["equivalence"], _extensions(t6)["reviewer"]) == (
        "44054006",
        "narrower",
        "cy",
    )
    assert "broader than the target" in t6["comment"]  # cmd-1: a narrower map has comments
    group, a4 = elements["A4"]
    assert "target" not in group
    assert [(t.get("code"), t["equivalence"]) for t in a4["target"]] == [(None, "unmatched")]
    assert len(data["group"]) == 3


def test_r5_conceptmap_validates_with_relationships_properties_and_nomap(
    with_snomed: Path, tmp_path: Path
) -> None:
    from fhir.resources.conceptmap import ConceptMap
    from fhir.resources.R4B.conceptmap import ConceptMap as ConceptMapR4B
    from pydantic import ValidationError

    out = tmp_path / "p.json"
    source = "http://hospital.example/fhir/CodeSystem/lab-codes"
    export("p", "fhir", out, db=with_snomed, fhir_version="R5", source_system=source)
    data = json.loads(out.read_text())
    ConceptMap.model_validate(data)
    assert {p["code"]: p["type"] for p in data["property"]} == {
        "reviewer": "string", "decided": "dateTime", "confidence": "decimal",
    }  # fmt: skip
    elements = _elements(data)
    assert {group["source"] for group, _ in elements.values()} == {source}
    relationships = {
        code: element["target"][0]["relationship"]
        for code, (_, element) in elements.items()
        if "target" in element
    }
    assert relationships == {
        "A1": "equivalent",
        "A 2": "source-is-narrower-than-target",
        "A3": "equivalent",
        "A6": "source-is-broader-than-target",
    }
    (t2,) = elements["A 2"][1]["target"]
    properties = {p["code"]: _value(p) for p in t2["property"]}
    assert properties["reviewer"] == "bob" and properties["decided"].endswith("+00:00")
    a4 = elements["A4"][1]
    assert a4["noMap"] is True and "target" not in a4
    assert _extensions(a4)["reviewer"] == "ann"
    # the validation is not vacuous: R5's relationship is no R4B field
    with pytest.raises(ValidationError, match="relationship"):
        ConceptMapR4B.model_validate(data)


def test_cli_exports_a_conceptmap(
    with_snomed: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "cm.json"
    args = ["map", "export", "p", "--format", "fhir", "--fhir-version", "R5", "--out", str(out)]
    code, stdout, err = run_main([*args, "--db", str(with_snomed)], capsys)
    assert code == 0, err
    assert "5 rows written" in stdout
    assert json.loads(out.read_text())["group"][0]["source"] == "urn:termnorm:project:p"


def test_every_predicate_has_an_equivalence_and_a_relationship() -> None:
    from termnorm.projects.exports.fhir import EQUIVALENCE, RELATIONSHIP
    from termnorm.projects.states import Predicate

    assert set(EQUIVALENCE) == set(RELATIONSHIP) == set(Predicate)


def test_fhir_codesystem_in_fhir_conceptmap_out(
    tmp_path: Path,
    tiny_bert_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A SNOMED CodeSystem → KG → index → project → ConceptMap: the target system is the
    CodeSystem's url again (one prefix table for both directions)."""
    from fhir.resources.R4B.conceptmap import ConceptMap

    from _project_fixtures import write_codes
    from termnorm.search.build import clear_caches

    clear_caches()
    monkeypatch.setenv("TERMNORM_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("TERMNORM_PROJECT_DB", raising=False)
    codesystem = Path(__file__).parent / "data" / "fhir" / "r5_parent.json"
    kg, index, db = tmp_path / "kg", tmp_path / "idx", str(tmp_path / "p.db")
    steps = [
        ["kg", "build", str(codesystem), "--format", "fhir", "--out", str(kg)],
        ["index", "build", "--kg", str(kg), "--model", str(tiny_bert_path), "--out", str(index)],
        ["map", "init", "dm", "--source", str(write_codes(tmp_path / "c.csv", [
            ("D1", "Diabetes mellitus type 2", "3", ""), ("D2", "Hypertensive disorder", "1", ""),
        ])), "--code-column", "code", "--text-column", "label", "--index", str(index), "--db", db],
        ["map", "run", "dm", "--no-progress", "--db", db],
        ["map", "auto-approve", "dm", "--min-score", "0.999", "--reviewer", "ann", "--db", db],
        ["map", "export", "dm", "--format", "fhir", "--out", str(tmp_path / "cm.json"), "--db", db],
    ]  # fmt: skip
    for args in steps:
        code, _, err = run_main(args, capsys)
        assert code == 0, (args, err)
    data = json.loads((tmp_path / "cm.json").read_text())
    ConceptMap.model_validate(data)
    (group,) = data["group"]
    assert (group["source"], group["target"]) == (
        "urn:termnorm:project:dm",
        "http://snomed.info/sct",
    )
    targets = {
        e["code"]: (e["target"][0]["code"], e["target"][0]["equivalence"]) for e in group["element"]
    }
    assert targets == {"D1": ("44054006", "equivalent"), "D2": ("38341003", "equivalent")}
