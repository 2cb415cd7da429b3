"""``termnorm annotate``: sources (text, file, folder, JSON Lines, PubTator), outputs
(JSON Lines, PubTator, BRAT), and bad input named and isolated."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _cli import run_main

DONE_WHEN = "Patient denies heart attack; history of asthma."


@pytest.fixture()
def base(index_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    monkeypatch.setenv("TERMNORM_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("COLUMNS", "200")
    return ["--index", str(index_dir), "--min-score", "0.99"]


def _rows(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_literal_text_prints_concepts_offsets_and_negation(
    base: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_main(["annotate", DONE_WHEN, *base], capsys)
    assert code == 0, err
    attack = next(line for line in out.splitlines() if "heart attack" in line)
    assert "15" in attack and "27" in attack and "T:0001" in attack and "negated" in attack
    asthma = next(line for line in out.splitlines() if "asthma" in line and "T:0004" in line)
    assert "historical" in asthma and "negated" not in asthma


def test_folder_to_jsonl_isolates_bad_files(
    base: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "a.txt").write_bytes(b"No asthma.\r\nMother: heart attack.\r\n")
    (folder / "b.txt").write_bytes(b"")
    (folder / "c.txt").write_bytes(b"\xff\xfe bronchial asthma \xe9")
    (folder / "d.txt").write_bytes(b"asthma\x00\x01")
    (folder / "e.txt").write_text("Sick headache today.", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    code, _, err = run_main(["annotate", str(folder), *base, "--out", str(out)], capsys)
    assert code == 0, err
    rows = _rows(out)
    errors = {r["doc_id"]: r["error"] for r in rows if "error" in r}
    assert set(errors) == {"b", "c", "d"}
    assert str(folder / "b.txt") in str(errors["b"]) and "empty" in str(errors["b"])
    assert str(folder / "c.txt") in str(errors["c"]) and "not UTF-8" in str(errors["c"])
    assert str(folder / "d.txt") in str(errors["d"]) and "binary" in str(errors["d"])
    found = [(r["doc_id"], r["text"], r["concept_id"]) for r in rows if "error" not in r]
    assert found == [
        ("a", "asthma", "T:0004"),
        ("a", "heart attack", "T:0001"),
        ("e", "Sick headache", "T:0005"),
    ]
    text_a = (folder / "a.txt").read_bytes().decode()
    for r in rows:
        if r.get("doc_id") == "a":
            assert text_a[int(str(r["start"])) : int(str(r["end"]))] == r["text"]
    first = next(r for r in rows if r.get("text") == "asthma")
    assert first["negated"] is True and first["provenance"]["detector"] == "dictionary"  # type: ignore[index]
    assert next(r for r in rows if r.get("text") == "heart attack")["family"] is True
    assert "3 refused" in err


def test_jsonl_input_with_named_fields_and_a_bad_line(
    base: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "docs.jsonl"
    lines = [
        json.dumps({"pmid": "1", "abstract": "Rule out pneumonia."}),
        "{not json",
        json.dumps({"pmid": "3", "abstract": None}),
        json.dumps({"pmid": "4", "abstract": "lung infection, HTN"}),
    ]
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    args = ["annotate", str(source), *base, "--id-field", "pmid", "--text-field", "abstract"]
    code, out, err = run_main(args, capsys)
    assert code == 0, err
    rows = [json.loads(line) for line in out.splitlines()]
    assert [(r["doc_id"], r.get("concept_id")) for r in rows] == [
        ("1", "T:0006"),
        ("docs.jsonl:2", None),
        ("3", None),
        ("4", "T:0006"),
        ("4", "T:0002"),
    ]
    assert rows[0]["hypothetical"] is True
    assert "not JSON" in rows[1]["error"] and "'abstract' is null" in rows[2]["error"]


def test_jsonl_without_the_text_field_names_the_option(
    base: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "docs.jsonl"
    source.write_text(json.dumps({"id": "x", "body": "asthma"}) + "\n", encoding="utf-8")
    code, out, _ = run_main(["annotate", str(source), *base], capsys)
    assert code == 0
    (row,) = [json.loads(line) for line in out.splitlines()]
    assert row["doc_id"] == "x" and "no field 'text'" in row["error"]
    assert "--text-field" in row["error"]


def test_pubtator_in_and_out_keeps_offsets(
    base: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "corpus.txt"
    source.write_text(
        "11|t|Asthma in adults\n11|a|No heart attack was seen.\n\n"
        "12|t|Anaemia\n12|a|Migraine headache.\n",
        encoding="utf-8",
    )
    out = tmp_path / "out.pubtator"
    args = ["annotate", str(source), *base, "--format", "pubtator", "--out", str(out)]
    code, _, err = run_main(args, capsys)
    assert code == 0, err
    written = out.read_text(encoding="utf-8").splitlines()
    assert written[:2] == ["11|t|Asthma in adults", "11|a|No heart attack was seen."]
    assert "11\t0\t6\tAsthma\tConcept\tT:0004" in written
    assert "11\t20\t32\theart attack\tConcept\tT:0001" in written
    assert "12\t0\t7\tAnaemia\tConcept\tT:0007" in written
    assert "12\t8\t25\tMigraine headache\tConcept\tT:0005" in written


def test_brat_writes_txt_and_ann_per_document(
    base: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "report.txt"
    source.write_bytes(b"Denies asthma.\r\nHeart attack in 2001.")
    folder = tmp_path / "brat"
    args = ["annotate", str(source), *base, "--format", "brat", "--out", str(folder)]
    code, _, err = run_main(args, capsys)
    assert code == 0, err
    assert (folder / "report.txt").read_bytes() == source.read_bytes()
    ann = (folder / "report.ann").read_text(encoding="utf-8").splitlines()
    assert ann[:3] == [
        "T1\tConcept 7 13\tasthma",
        "#1\tAnnotatorNotes T1\tT:0004 asthma",
        "A1\tNegated T1",
    ]
    assert "T2\tConcept 16 28\tHeart attack" in ann


def test_brat_needs_an_out_folder(base: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_main(["annotate", "asthma", *base, "--format", "brat"], capsys)
    assert code == 2 and "--format brat writes a folder" in err


@pytest.mark.parametrize(
    ("content", "message"),
    [(b"", "an empty file"), (b"\x00\x01asthma", "a binary file"), (b"\xffasthma", "not UTF-8")],
)
def test_a_bad_single_file_is_named_with_its_path(
    base: list[str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    content: bytes,
    message: str,
) -> None:
    source = tmp_path / "bad.txt"
    source.write_bytes(content)
    code, _, err = run_main(["annotate", str(source), *base], capsys)
    assert code == 1
    assert f"{source}: {message}" in err


def test_a_missing_file_is_not_taken_for_text(
    base: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_main(["annotate", str(tmp_path / "nope.txt"), *base], capsys)
    assert code == 1 and "nope.txt: no such file" in err


def test_a_document_over_the_cap_is_refused_by_id_and_others_go_on(
    base: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "long.txt").write_text("asthma " * 20, encoding="utf-8")
    (folder / "short.txt").write_text("asthma", encoding="utf-8")
    args = ["annotate", str(folder), *base, "--max-document-chars", "50"]
    code, out, _ = run_main(args, capsys)
    assert code == 0
    rows = [json.loads(line) for line in out.splitlines()]
    assert rows[0]["doc_id"] == "long" and "document 'long'" in rows[0]["error"]
    assert [(r["doc_id"], r["concept_id"]) for r in rows[1:]] == [("short", "T:0004")]


def test_every_document_has_a_row_even_when_nothing_is_found(
    base: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "docs.jsonl"
    docs = [("empty", ""), ("blank", "  "), ("none", "Nothing here."), ("one", "asthma")]
    source.write_text(
        "".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in docs), encoding="utf-8"
    )
    code, out, err = run_main(["annotate", str(source), *base], capsys)
    assert code == 0, err
    rows = [json.loads(line) for line in out.splitlines()]
    assert rows[:3] == [{"doc_id": d, "annotations": 0} for d in ("empty", "blank", "none")]
    assert [(r["doc_id"], r["concept_id"]) for r in rows[3:]] == [("one", "T:0004")]
    assert "annotated 4 documents: 1 annotations, 0 refused" in err


def test_a_lone_surrogate_is_its_documents_error_and_the_others_go_on(
    base: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "docs.jsonl"
    source.write_text(
        '{"id": "bad", "text": "asthma \\ud800"}\n{"id": "good", "text": "asthma"}\n',
        encoding="utf-8",
    )
    out = tmp_path / "out.jsonl"
    code, _, err = run_main(["annotate", str(source), *base, "--out", str(out)], capsys)
    assert code == 0, err
    rows = _rows(out)
    assert rows[0] == {
        "doc_id": "bad",
        "error": "document 'bad': not valid Unicode text: a lone surrogate U+D800 at character "
        "7; give UTF-8 text",
    }
    assert [(r["doc_id"], r["concept_id"]) for r in rows[1:]] == [("good", "T:0004")]


@pytest.mark.parametrize("with_out", [False, True])
def test_a_file_given_alone_and_refused_exits_1_with_its_row(
    base: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str], with_out: bool
) -> None:
    source = tmp_path / "long.txt"
    source.write_text("asthma " * 20, encoding="utf-8")
    out = tmp_path / "out.jsonl"
    args = ["annotate", str(source), *base, "--max-document-chars", "50"]
    code, printed, err = run_main([*args, "--out", str(out)] if with_out else args, capsys)
    assert code == 1
    assert f"error: {source} was refused" in err
    rows = _rows(out) if with_out else [json.loads(line) for line in printed.splitlines()]
    assert [r["doc_id"] for r in rows] == ["long"]
    assert "140 characters, over the limit of 50" in str(rows[0]["error"])


def test_json_prints_rows_for_a_text_and_the_report_for_an_out_run(
    base: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_main(["annotate", DONE_WHEN, *base, "--json"], capsys)
    assert code == 0, err
    rows = [json.loads(line) for line in out.splitlines()]
    assert [(r["doc_id"], r["text"], r["concept_id"]) for r in rows] == [
        ("text", "heart attack", "T:0001"),
        ("text", "asthma", "T:0004"),
    ]
    target = tmp_path / "out.jsonl"
    code, out, err = run_main(
        ["annotate", DONE_WHEN, *base, "--json", "--out", str(target)], capsys
    )
    assert code == 0, err
    report = json.loads(out)
    assert {k: report[k] for k in ("documents", "annotations", "refused", "output")} == {
        "documents": 1,
        "annotations": 2,
        "refused": 0,
        "output": str(target),
    }
