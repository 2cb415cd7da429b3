"""``termnorm kg build`` / ``termnorm kg info`` through the real Typer app."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from termnorm.cli import kg_cmd
from termnorm.cli.main import _register, app, main
from termnorm.kg import KnowledgeGraph
from termnorm.kg.build import KGFormat

FIXTURES = Path(__file__).parent / "fixtures" / "kg"
HPO_DIR = FIXTURES / "hpo"
UMLS = FIXTURES / "umls"
MEDIC = FIXTURES / "medic" / "medic_biosyn.txt"

runner = CliRunner()


@pytest.fixture(scope="module", autouse=True)
def _registered() -> None:
    _register()


def _invoke(*args: str) -> dict:
    result = runner.invoke(app, ["kg", *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout) if "--json" in args else {"output": result.stdout}


def test_every_format_is_offered_and_accepted(tmp_path: Path) -> None:
    help_text = runner.invoke(app, ["kg", "build", "--help"]).stdout
    with pytest.raises(ValueError, match="cannot tell the format") as error:
        kg_cmd._infer_format(tmp_path)
    for fmt in KGFormat:
        assert fmt.value in help_text and fmt.value in str(error.value)
        assert kg_cmd.parse_add(fmt.value.upper()).format == fmt


def test_parse_add() -> None:
    spec = kg_cmd.parse_add("hpo:builtin#databases=OMIM,ORPHA,with_annotations=true")
    assert spec.format == KGFormat.HPO and spec.path is None
    assert spec.options == {"databases": "OMIM,ORPHA", "with_annotations": "true"}
    assert kg_cmd.parse_add("icd10cm").path is None
    assert kg_cmd.parse_add("medic:/data/a#b.txt").path == Path("/data/a#b.txt")


def test_build_umls_with_flags_json(tmp_path: Path) -> None:
    out = tmp_path / "kg"
    card = _invoke(
        "build",
        str(UMLS),
        "--format",
        "umls",
        "--sab",
        "MSH",
        "--one-direction",
        "--out",
        str(out),
        "--json",
    )
    assert card["out"] == str(out)
    assert card["counts"]["concepts"] == 19
    options = card["sources"][0]["options"]
    assert options["sabs"] == ["MSH"] and options["one_direction"] is True
    assert KnowledgeGraph.load(out).fingerprint == card["fingerprint"]


def test_build_infers_umls_folder_and_prints_table(tmp_path: Path) -> None:
    output = _invoke("build", str(UMLS), "--out", str(tmp_path / "kg"))["output"]
    rows = [[cell.strip() for cell in line.split("│")[1:-1]] for line in output.splitlines()]
    assert ["kept", "concepts", "20"] in rows
    assert ["dropped", "term: language not selected (LAT)", "5"] in rows  # each drop reason
    assert ["KG", "relations", "14"] in rows


def test_build_several_sources_with_add(tmp_path: Path) -> None:
    out = tmp_path / "kg"
    card = _invoke(
        "build",
        str(MEDIC),
        "--format",
        "medic",
        "--add",
        f"hpo:{HPO_DIR}#databases=OMIM",
        "--add",
        f"tsv:{FIXTURES / 'dict' / 'dictionary.tsv'}",
        "--prefix",
        "MEDDRA",
        "--synonym-scopes",
        "EXACT",
        "--out",
        str(out),
        "--json",
    )
    sources = card["sources"]
    assert [s["format"] for s in sources] == ["medic", "hpo", "tsv"]
    assert sources[1]["options"]["databases"] == ["OMIM"]
    assert sources[1]["options"]["synonym_scopes"] == ["EXACT"]
    assert sources[2]["options"]["prefix"] == "MEDDRA"
    kg = KnowledgeGraph.load(out)
    assert "MEDDRA:10019211" in set(kg.concepts.concept_id)
    assert "ORPHA:33069" not in set(kg.concepts.concept_id)
    assert len(card["reports"]) == 3


def test_no_annotations_flag(tmp_path: Path) -> None:
    card = _invoke(
        "build",
        str(HPO_DIR),
        "--format",
        "hpo",
        "--no-annotations",
        "--out",
        str(tmp_path / "kg"),
        "--json",
    )
    assert card["counts"]["concepts"] == 20


def test_info(tmp_path: Path) -> None:
    _invoke("build", "--add", f"obo:{HPO_DIR / 'hp.obo'}", "--out", str(tmp_path / "kg"))
    card = _invoke("info", str(tmp_path / "kg"), "--json")
    assert card["counts"]["concepts"] == 20 and card["sources"][0]["format"] == "obo"
    assert "obo:" in _invoke("info", str(tmp_path / "kg"))["output"]


def test_help_has_examples() -> None:
    result = runner.invoke(app, ["kg", "build", "--help"])
    assert result.exit_code == 0
    assert "Examples" in result.stdout and "--add" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--format", "rrf", "x"], "unknown KG format 'rrf' .* Known: umls, obo, hpo"),
        (["--add", "nope:/x"], "unknown KG format 'nope'"),
        (["--format", "tsv", "/no/such.tsv"], r"/no/such\.tsv: file not found"),
        (["--format", "hpo", "--lang", "FRE"], "--lang does not apply to any of the given sources"),
        ([], "give a SOURCE with --format, or at least one --add"),
        ([str(FIXTURES / "dict" / "dictionary.tsv")], "cannot tell the format"),
    ],
)
def test_errors_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["kg", "build", *args, "--out", str(tmp_path / "kg")])
    assert exc.value.code not in (0, None)
    err = capsys.readouterr().err
    assert re.search(message, err), err
    assert "Traceback" not in err
    assert not (tmp_path / "kg").exists()


def test_info_on_a_non_kg_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["kg", "info", str(tmp_path)])
    assert "is not a termnorm kg folder" in capsys.readouterr().err


def test_build_hpo_used_only(tmp_path: Path) -> None:
    out = tmp_path / "kg"
    card = _invoke(
        "build",
        str(HPO_DIR),
        "--format",
        "hpo",
        "--no-annotations",
        "--used-only",
        "--out",
        str(out),
        "--json",
    )
    assert card["sources"][0]["options"]["used_only"] is True
    assert card["counts"]["concepts"] == 17  # 20 live HP terms, 3 no disease uses
    assert card["reports"][0]["dropped"]["concept: outside the selected subset"] == 3
