"""Batch files in CSV, TSV, JSONL and Parquet: one output row per input row, in order,
input columns untouched, bad rows carrying their error, atomic output."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from _index_fakes import TABLE, KeyedEncoder, known_kg, unit
from termnorm.errors import InputFormatError
from termnorm.index import TermIndex
from termnorm.search import Normalizer
from termnorm.search.batch import normalize_file
from termnorm.search.file_spec import NormalizeFileSpec

LONG = "x" * 1001
# (id, term, expected concept or error fragment)
ROWS = [
    ("1", "q alpha", "A:1"),
    ("2", "", "empty input"),
    ("3", "   ", "whitespace-only"),
    ("4", LONG, "input too long"),
    ("5", "q zeta", "Z:1"),
    ("6", "42", None),  # in CSV/TSV a number is text; it normalizes to something
]


def fake_normalizer() -> Normalizer:
    """O-T over the known KG with vectors keyed by text (``q alpha`` → ``A:1``, ...)."""
    encoder = KeyedEncoder(TABLE | {"q half": unit(1, 1, 1, 1)})
    return Normalizer(TermIndex.build(known_kg(), encoder, show_progress=False), encoder)


@pytest.fixture()
def normalizer() -> Normalizer:
    return fake_normalizer()


def write_rows(path: Path, records: list[dict[str, Any]]) -> None:
    """Write ``records`` in the format of ``path``'s suffix."""
    if path.suffix in (".csv", ".tsv"):
        delimiter = "\t" if path.suffix == ".tsv" else ","
        with open(path, "w", newline="") as fh:
            quoting = csv.QUOTE_NONE if delimiter == "\t" else csv.QUOTE_MINIMAL
            writer = csv.writer(fh, delimiter=delimiter, quoting=quoting, lineterminator="\n")
            writer.writerow(list(records[0]))
            writer.writerows([list(r.values()) for r in records])
    elif path.suffix == ".jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in records))
    else:
        pq.write_table(pa.Table.from_pylist(records), path)


def read_rows(path: Path) -> list[dict[str, Any]]:
    """Read an output file back as records."""
    if path.suffix in (".csv", ".tsv"):
        delimiter = "\t" if path.suffix == ".tsv" else ","
        quoting = csv.QUOTE_NONE if delimiter == "\t" else csv.QUOTE_MINIMAL
        with open(path, newline="") as fh:
            return list(csv.DictReader(fh, delimiter=delimiter, quoting=quoting))
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in path.read_text().splitlines()]
    return pq.read_table(path).to_pylist()


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".jsonl", ".parquet"])
@pytest.mark.parametrize("chunk_rows", [2, 4096])
def test_every_row_comes_back_in_order(
    suffix: str, chunk_rows: int, normalizer: Normalizer, tmp_path: Path
) -> None:
    src, out = tmp_path / f"in{suffix}", tmp_path / f"out{suffix}"
    write_rows(src, [{"id": i, "term": t, "note": f"n{i}"} for i, t, _ in ROWS])
    report = normalize_file(
        normalizer, NormalizeFileSpec.of(src, out, chunk_rows=chunk_rows, show_progress=False)
    )
    rows = read_rows(out)
    assert (report.rows, report.errors, report.column) == (6, 3, "term")
    assert [r["id"] for r in rows] == [i for i, _, _ in ROWS]
    assert [r["term"] for r in rows] == [t for _, t, _ in ROWS]  # input untouched
    assert [r["note"] for r in rows] == [f"n{i}" for i, _, _ in ROWS]
    assert list(rows[0]) == [
        "id",
        "term",
        "note",
        "concept_id",
        "concept_name",
        "score",
        "matched_term",
        "error",
    ]
    for row, (_, _, expected) in zip(rows, ROWS, strict=True):
        if expected is None:
            assert row["concept_id"] and not row["error"]
        elif ":" in expected:
            assert row["concept_id"] == expected and not row["error"]
        else:
            assert expected in row["error"] and not row["concept_id"]
    assert rows[0]["matched_term"] == "alpha disease" and float(rows[0]["score"]) == 1.0
    assert not list(tmp_path.glob(".out*"))  # no temporary file left


def test_jsonl_non_text_and_missing_values(normalizer: Normalizer, tmp_path: Path) -> None:
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    lines = ['{"term": 42}', '{"term": null}', '{"other": "no term key"}', '{"term": ["a"]}']
    src.write_text("\n".join(lines) + "\n\n")  # the trailing blank line is not a record
    normalize_file(normalizer, NormalizeFileSpec.of(src, out, show_progress=False))
    rows = read_rows(out)
    assert [r["error"].split(":")[0] for r in rows] == [
        "not text",
        "empty input",
        "empty input",
        "not text",
    ]
    assert rows[0]["term"] == 42 and rows[0]["concept_id"] is None


def test_parquet_keeps_types_and_nulls(normalizer: Normalizer, tmp_path: Path) -> None:
    src, out = tmp_path / "in.parquet", tmp_path / "out.parquet"
    pq.write_table(pa.table({"n": [1, 2], "term": ["q alpha", None]}), src)
    normalize_file(normalizer, NormalizeFileSpec.of(src, out, show_progress=False))
    table = pq.read_table(out)
    assert table.schema.field("n").type == pa.int64()
    assert table.schema.field("score").type == pa.float64()
    assert table.column("error").to_pylist() == [None, "empty input: no text given"]


def test_non_text_column_in_parquet(normalizer: Normalizer, tmp_path: Path) -> None:
    src, out = tmp_path / "in.parquet", tmp_path / "out.parquet"
    pq.write_table(pa.table({"code": [7, 8]}), src)
    normalize_file(normalizer, NormalizeFileSpec.of(src, out, show_progress=False))
    assert all("not text: got int" in e for e in pq.read_table(out).column("error").to_pylist())


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".parquet"])
def test_top_k_candidates_column(suffix: str, normalizer: Normalizer, tmp_path: Path) -> None:
    src, out = tmp_path / f"in{suffix}", tmp_path / f"out{suffix}"
    write_rows(src, [{"term": "q zeta"}, {"term": ""}])
    normalize_file(normalizer, NormalizeFileSpec.of(src, out, k=2, show_progress=False))
    rows = read_rows(out)
    first = rows[0]["candidates"]
    first = first if isinstance(first, list) else json.loads(first)
    assert [(c["rank"], c["concept_id"]) for c in first] == [(1, "Z:1"), (2, "Z:9")]
    assert set(first[0]) == {
        "rank",
        "concept_id",
        "concept_name",
        "score",
        "matched_term",
        "source",
        "term_source",
        "is_preferred",
        "semantic_types",
    }
    assert (first[0]["source"], first[0]["semantic_types"]) == ("ontology", [])
    assert rows[1]["candidates"] in ([], None, "")


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".parquet"])
def test_abstained_rows_say_why_and_are_counted_apart(
    suffix: str, normalizer: Normalizer, tmp_path: Path
) -> None:
    src, out = tmp_path / f"in{suffix}", tmp_path / f"out{suffix}"
    # "q alpha" meets "alpha disease" at cos 1; "q half" meets no term above cos 0.64
    write_rows(src, [{"term": "q alpha"}, {"term": "q half"}, {"term": ""}])
    strict = normalizer.configure(min_score=0.9)
    report = normalize_file(strict, NormalizeFileSpec.of(src, out, k=2, show_progress=False))
    assert (report.rows, report.errors, report.abstained) == (3, 1, 1)
    assert report.to_dict()["abstained"] == 1
    rows = read_rows(out)
    assert rows[0]["concept_id"] == "A:1" and not rows[0]["error"]
    assert not rows[1]["concept_id"] and rows[1]["error"] == "no concept scored >= 0.9"
    assert rows[1]["candidates"] in ([], None, "")
    assert rows[2]["error"].startswith("empty input")


def test_column_choice(normalizer: Normalizer, tmp_path: Path) -> None:
    src = tmp_path / "in.csv"
    write_rows(src, [{"mention": "q alpha", "other": "q zeta"}])
    report = normalize_file(
        normalizer, NormalizeFileSpec.of(src, tmp_path / "a.csv", show_progress=False)
    )
    assert report.column == "mention"  # the one column named like a text
    assert read_rows(tmp_path / "a.csv")[0]["concept_id"] == "A:1"
    normalize_file(
        normalizer,
        NormalizeFileSpec.of(src, tmp_path / "b.csv", column="other", show_progress=False),
    )
    assert read_rows(tmp_path / "b.csv")[0]["concept_id"] == "Z:1"
    with pytest.raises(InputFormatError, match="no column 'nope'; columns are"):
        normalize_file(
            normalizer,
            NormalizeFileSpec.of(src, tmp_path / "c.csv", column="nope", show_progress=False),
        )


def test_no_column_given_picks_a_text_named_or_sole_column_else_refuses(
    normalizer: Normalizer, tmp_path: Path
) -> None:
    src = tmp_path / "ids.csv"
    write_rows(src, [{"id": "17", "Term": "q zeta", "code": "9"}])
    report = normalize_file(
        normalizer, NormalizeFileSpec.of(src, tmp_path / "a.csv", show_progress=False)
    )
    assert report.column == "Term" and read_rows(tmp_path / "a.csv")[0]["concept_id"] == "Z:1"
    write_rows(src, [{"x": "q alpha"}])
    assert (
        normalize_file(
            normalizer, NormalizeFileSpec.of(src, tmp_path / "b.csv", show_progress=False)
        ).column
        == "x"
    )
    write_rows(src, [{"id": "17", "label": "q alpha"}])  # an ID column is never guessed
    with pytest.raises(
        InputFormatError, match=r"no column named text/term/mention; .*--column .*\['id', 'label'\]"
    ):
        normalize_file(
            normalizer, NormalizeFileSpec.of(src, tmp_path / "c.csv", show_progress=False)
        )
    write_rows(src, [{"text": "q alpha", "mention": "q zeta"}])
    with pytest.raises(InputFormatError, match=r"several text-like columns \['text', 'mention'\]"):
        normalize_file(
            normalizer, NormalizeFileSpec.of(src, tmp_path / "d.csv", show_progress=False)
        )
    assert not (tmp_path / "c.csv").exists() and not (tmp_path / "d.csv").exists()


def test_output_folder_or_input_itself_is_refused_before_the_run(
    normalizer: Normalizer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = tmp_path / "in.csv"
    write_rows(src, [{"term": "q alpha"}])
    before = src.read_text()
    monkeypatch.setattr(normalizer, "normalize_rows", lambda *a, **k: pytest.fail("ran"))
    with pytest.raises(ValueError, match=r"is a folder; give a file path, e.g. .*in\.norm\.csv"):
        normalize_file(normalizer, NormalizeFileSpec.of(src, tmp_path, show_progress=False))
    monkeypatch.chdir(tmp_path)
    for same in (src, Path("in.csv"), Path("./sub/../in.csv")):
        with pytest.raises(ValueError, match="is the input file; writing there would overwrite"):
            normalize_file(normalizer, NormalizeFileSpec.of(src, same, show_progress=False))
    assert src.read_text() == before


def test_output_format_follows_the_output_suffix(normalizer: Normalizer, tmp_path: Path) -> None:
    src = tmp_path / "in.csv"
    write_rows(src, [{"term": "q alpha"}])
    normalize_file(
        normalizer, NormalizeFileSpec.of(src, tmp_path / "out.jsonl", show_progress=False)
    )
    assert read_rows(tmp_path / "out.jsonl")[0]["concept_id"] == "A:1"
    normalize_file(
        normalizer, NormalizeFileSpec.of(src, tmp_path / "out.txt", show_progress=False)
    )  # unknown: CSV
    assert (tmp_path / "out.txt").read_text().startswith("term,concept_id")


def test_blank_csv_line_is_a_row_not_skipped(normalizer: Normalizer, tmp_path: Path) -> None:
    src, out = tmp_path / "in.csv", tmp_path / "out.csv"
    src.write_text("term\nq alpha\n\nq zeta\n")
    normalize_file(normalizer, NormalizeFileSpec.of(src, out, show_progress=False))
    rows = read_rows(out)
    assert [r["concept_id"] for r in rows] == ["A:1", "", "Z:1"]
    assert rows[1]["error"].startswith("empty input")


def test_existing_output_columns_are_refused(normalizer: Normalizer, tmp_path: Path) -> None:
    src = tmp_path / "in.csv"
    write_rows(src, [{"term": "q alpha", "concept_id": "old"}])
    with pytest.raises(InputFormatError, match="already has column"):
        normalize_file(
            normalizer, NormalizeFileSpec.of(src, tmp_path / "out.csv", show_progress=False)
        )


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("bad.csv", "term\nq alpha\na,b\n", r"bad.csv:3: 2 fields, the header has 1"),
        ("bad.jsonl", '{"term": "a"}\n{"term": \n', r"bad.jsonl:2: invalid JSON"),
        ("bad.jsonl", '["a"]\n', r"bad.jsonl:1: each line must be a JSON object"),
        ("bad.xlsx", "x", "unknown file type '.xlsx'; use one of"),
        ("bad.parquet", "not parquet", "not a readable Parquet file"),
        ("dup.csv", "term,term\na,b\n", "repeated column names: term"),
    ],
)
def test_malformed_files_name_file_and_line(
    name: str, content: str, message: str, normalizer: Normalizer, tmp_path: Path
) -> None:
    src = tmp_path / name
    src.write_text(content)
    out = tmp_path / f"out{src.suffix}"
    with pytest.raises(InputFormatError, match=message):
        normalize_file(normalizer, NormalizeFileSpec.of(src, out, show_progress=False))
    assert not out.exists() and not list(tmp_path.glob(".out*"))


def test_failure_midway_leaves_previous_output_untouched(
    normalizer: Normalizer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src, out = tmp_path / "in.csv", tmp_path / "out.csv"
    write_rows(src, [{"term": "q alpha"}] * 5)
    out.write_text("previous\n")
    calls = iter([False, True])

    original = normalizer.normalize_rows

    def flaky(texts: list[object], k: int = 1) -> Any:
        if next(calls):
            raise RuntimeError("boom")
        return original(texts, k)

    monkeypatch.setattr(normalizer, "normalize_rows", flaky)
    with pytest.raises(RuntimeError, match="boom"):
        normalize_file(
            normalizer, NormalizeFileSpec.of(src, out, chunk_rows=3, show_progress=False)
        )
    assert out.read_text() == "previous\n"
    assert not list(tmp_path.glob(".out*"))
