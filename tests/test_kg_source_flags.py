"""``termnorm kg build``'s source flags, generated from the loaders' options classes
(:mod:`termnorm.cli._source_flags`): every field reaches a flag, shared flags set each
format's own field, a new field needs no other edit, and registering imports no pandas."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from _cli import heavy_modules_after_registering
from termnorm.cli import kg_cmd
from termnorm.cli._source_flags import flag_values, source_flags
from termnorm.cli.main import _register, app
from termnorm.kg import KnowledgeGraph
from termnorm.kg.build import SourceSpec
from termnorm.kg.formats import FORMATS, KGFormat
from termnorm.kg.options import TsvOptions
from termnorm.options import opt

runner = CliRunner()
SRC = Path(__file__).resolve().parents[1] / "src"


@pytest.fixture(scope="module", autouse=True)
def _registered() -> None:
    _register()


def _build(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["kg", "build", *args])
    message = str(result.exception) if result.exception else ""
    return result.exit_code, result.output + message


def _swap_options(monkeypatch: pytest.MonkeyPatch, name: str, options: type) -> None:
    """Give the registered format ``name`` another options class for this test."""
    entry = dataclasses.replace(FORMATS.resolve(name), options=options)
    monkeypatch.setitem(FORMATS._entries, name, entry)


def test_every_built_in_format_is_registered_with_an_options_class() -> None:
    assert FORMATS.names() == [f.value for f in KGFormat]
    assert all(dataclasses.is_dataclass(entry.options) for entry in FORMATS)
    assert FORMATS.resolve("biosyn").options is FORMATS.resolve("tsv").options is TsvOptions


def test_every_options_field_is_a_flag_that_help_lists() -> None:
    help_text = runner.invoke(app, ["kg", "build", "--help"], terminal_width=200).output
    flags = source_flags()
    for entry in FORMATS:
        for field in dataclasses.fields(entry.options):  # type: ignore[arg-type]
            (flag,) = [f for f in flags if f.fields.get(entry.name) == field.name]
            assert flag.names.split("/")[0] in help_text, (entry.name, field.name)
            assert entry.name in flag.helps


def test_shared_flags_set_each_formats_own_field() -> None:
    by_name = {f.names.split("/")[0]: f for f in source_flags()}
    lang = by_name["--lang"]
    assert lang.fields == {
        KGFormat.UMLS: "langs",
        KGFormat.ICD10WHO: "langs",
        KGFormat.ICD9PROCS: "langs",
        KGFormat.GNUHEALTH: "langs",
    }
    default_language = by_name["--default-language"]
    assert default_language.fields[KGFormat.TSV] == "lang"
    assert default_language.fields[KGFormat.FHIR] == "default_language"
    assert by_name["--with-annotations"].names == "--with-annotations/--no-annotations"
    # each format's help and default are in the flag's help
    assert "Default: ENG." in lang.helps[KGFormat.UMLS]
    assert "Default: en,es,de,fr,zh." in lang.helps[KGFormat.ICD10WHO]


def test_comma_separated_and_repeated_values_are_flattened() -> None:
    flags = source_flags()
    values = flag_values(flags, {"lang": ["ENG,FRE", " GER "], "sab": None, "prefix": "X"})
    assert {f.names: v for f, v in values.items()} == {
        "--lang": ["ENG", "FRE", "GER"],
        "--prefix": "X",
    }


def test_a_flag_given_sets_every_source_that_has_it_and_per_source_options_win() -> None:
    flags = source_flags()
    specs = [
        SourceSpec(KGFormat.TSV, Path("a.tsv")),
        SourceSpec(KGFormat.FHIR, Path("c.json"), {"default_language": "de"}),
        SourceSpec(KGFormat.MEDIC, Path("m.txt")),
    ]
    out = kg_cmd._with_flags(specs, flag_values(flags, {"default_language": "fr"}))
    assert [s.options for s in out] == [{"lang": "fr"}, {"default_language": "de"}, {}]


def test_a_flag_no_source_takes_is_refused_by_the_name_typed(tmp_path: Path) -> None:
    source = tmp_path / "d.tsv"
    source.write_text("concept_id\tterm\nX:1\tfever\n", encoding="utf-8")
    args = [str(source), "--format", "tsv", "--out", str(tmp_path / "kg")]
    code, output = _build(*args, "--no-annotations")
    assert code != 0 and "--no-annotations does not apply to any of the given sources" in output
    code, output = _build(*args, "--lang", "en")
    assert code != 0 and "--lang does not apply" in output


def test_flags_that_were_only_key_value_options_now_build(tmp_path: Path) -> None:
    source = tmp_path / "d.txt"
    source.write_text("concept_id;term\nX:1;fièvre\nX:2;toux\n", encoding="utf-8")
    out = tmp_path / "kg"
    code, output = _build(
        str(source), "--format", "tsv", "--delimiter", ";", "--default-language", "fr",
        "--out", str(out), "--json",
    )  # fmt: skip
    assert code == 0, output
    kg = KnowledgeGraph.load(out)
    assert sorted(kg.terms["term"]) == ["fièvre", "toux"]
    assert set(kg.terms["lang"]) == {"fr"}
    options = kg.card["sources"][0]["options"]
    assert (options["delimiter"], options["lang"], options["prefix"]) == (";", "fr", "LOCAL")


def test_a_new_options_field_reaches_the_cli_with_no_other_edit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    @dataclass(frozen=True)
    class Extended(TsvOptions):
        comment: str = opt("", "Lines starting with this are skipped.")

    _swap_options(monkeypatch, "tsv", Extended)
    (flag,) = [f for f in source_flags() if f.names == "--comment"]
    assert flag.fields == {KGFormat.TSV: "comment"}
    assert flag.helps == {KGFormat.TSV: "Lines starting with this are skipped."}
    (spec,) = kg_cmd._with_flags([SourceSpec(KGFormat.TSV, Path("a.tsv"))], {flag: "#"})
    assert spec.options == {"comment": "#"}


def test_one_flag_over_fields_of_different_types_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    @dataclass(frozen=True)
    class Clashing:
        prefix: int = opt(0, "A number where tsv has text.")

    _swap_options(monkeypatch, "medic", Clashing)
    with pytest.raises(TypeError, match="--prefix sets fields of types"):
        source_flags()


def test_registering_kg_imports_no_pandas() -> None:
    assert heavy_modules_after_registering(("pandas", "pyarrow", "torch")) == []


def test_two_flags_over_one_parameter_name_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    @dataclass(frozen=True)
    class Clashing:
        validate: str = opt("", "Text where fhir's validate is a switch.")

    _swap_options(monkeypatch, "medic", Clashing)
    with pytest.raises(TypeError, match="would both be parameter 'validate'"):
        source_flags()


def test_a_choice_flag_takes_any_case(tmp_path: Path) -> None:
    """``--fhir-version r4b`` as FhirVersion's own parsing (and ``#fhir_version=r4b``)."""
    source = tmp_path / "cs.json"
    source.write_text(
        '{"resourceType": "CodeSystem", "url": "http://example.org/cs", "status": "active",'
        ' "content": "complete", "concept": [{"code": "a", "display": "fever"}]}',
        encoding="utf-8",
    )
    out = tmp_path / "kg"
    code, output = _build(
        str(source), "--format", "fhir", "--fhir-version", "r4b", "--prefix", "EX",
        "--out", str(out),
    )  # fmt: skip
    assert code == 0, output
    assert KnowledgeGraph.load(out).card["sources"][0]["options"]["fhir_version"] == "R4B"
