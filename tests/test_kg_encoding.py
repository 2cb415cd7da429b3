"""Sources that are not UTF-8: ``FILE:LINE`` of the first undecodable bytes and the option
that fixes them (``--encoding`` for tsv/csv/biosyn, a conversion for UTF-8-only formats)."""

from __future__ import annotations

from pathlib import Path

import pytest

from _cli import run_main
from termnorm.errors import InputFormatError
from termnorm.kg import KnowledgeGraph
from termnorm.kg.build import KGFormat, SourceSpec, build_kg

LATIN1_TSV = "D1\tfever\nD2\tcough\nD3\tcaf\u00e9 au lait spots\n"


def _write(path: Path, text: str, encoding: str) -> Path:
    path.write_bytes(text.encode(encoding))
    return path


def _terms(kg: KnowledgeGraph) -> set[str]:
    return set(kg.terms["term"])


@pytest.mark.parametrize(
    ("name", "fmt", "text"),
    [
        ("dict.tsv", KGFormat.TSV, LATIN1_TSV),
        ("dict.csv", KGFormat.TSV, LATIN1_TSV.replace("\t", ",")),
        ("dict.txt", KGFormat.BIOSYN, LATIN1_TSV.replace("\t", "||")),
    ],
)
def test_a_latin1_dictionary_names_its_line_and_reads_with_its_encoding(
    tmp_path: Path, name: str, fmt: KGFormat, text: str
) -> None:
    path = _write(tmp_path / name, text, "latin-1")
    with pytest.raises(
        InputFormatError,
        match=rf"{name}:3: bytes b'\\xe9' at byte \d+ are not valid utf-8; give the file's "
        r"encoding with --encoding \(e\.g\. latin-1, cp1252",
    ):
        build_kg([SourceSpec(fmt, path, {})])
    kg, _ = build_kg([SourceSpec(fmt, path, {"encoding": "latin-1"})])
    assert "caf\u00e9 au lait spots" in _terms(kg)


def test_utf8_with_a_byte_order_mark_still_reads(tmp_path: Path) -> None:
    path = _write(tmp_path / "bom.tsv", "\ufeff" + LATIN1_TSV, "utf-8")
    kg, _ = build_kg([SourceSpec(KGFormat.TSV, path, {"encoding": "utf-8"})])
    assert set(kg.concepts["concept_id"]) == {"LOCAL:D1", "LOCAL:D2", "LOCAL:D3"}


def test_a_utf8_only_format_says_to_convert_the_file(tmp_path: Path) -> None:
    obo = "format-version: 1.2\n\n[Term]\nid: X:1\nname: caf\u00e9\n"
    path = _write(tmp_path / "x.obo", obo, "latin-1")
    with pytest.raises(InputFormatError, match=r"x\.obo:5: .*read as UTF-8: convert the file"):
        build_kg([SourceSpec(KGFormat.OBO, path, {})])


def test_an_unknown_encoding_is_named(tmp_path: Path) -> None:
    path = _write(tmp_path / "d.tsv", LATIN1_TSV, "latin-1")
    with pytest.raises(ValueError, match="unknown encoding 'latin-9x'"):
        build_kg([SourceSpec(KGFormat.TSV, path, {"encoding": "latin-9x"})])


def test_cli_encoding_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path / "d.tsv", LATIN1_TSV, "latin-1")
    argv = ["kg", "build", str(path), "--format", "tsv", "--out", str(tmp_path / "kg")]
    code, _, err = run_main(argv, capsys)
    assert code == 1 and f"{path}:3:" in err and "--encoding" in err
    code, _, err = run_main([*argv, "--encoding", "latin-1"], capsys)
    assert code == 0, err
    assert "caf\u00e9 au lait spots" in _terms(KnowledgeGraph.load(tmp_path / "kg"))
    obo = [*argv[:-1], str(tmp_path / "kg-obo"), "--format", "obo", "--encoding", "latin-1"]
    code, _, err = run_main(obo, capsys)
    assert code == 1 and "--encoding does not apply" in err
