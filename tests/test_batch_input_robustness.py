"""Nothing lost on odd input (issue 21, items 4 and 5): JSONL keys of any record kept,
clashing fields kept under a prefix or refused, mixed JSON types to Parquet, over-long cells
and undecodable bytes as per-row matters or a file:line message, one output row per row."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from termnorm.errors import InputFormatError
from termnorm.io.tables import json_column_type, open_reader
from termnorm.search import Normalizer
from termnorm.search.batch import normalize_file
from termnorm.search.file_spec import NormalizeFileSpec
from test_normalize_files import fake_normalizer, read_rows


@pytest.fixture()
def normalizer() -> Normalizer:
    return fake_normalizer()


JSONL = [
    {"term": "q alpha"},
    {"term": "q zeta", "id": 3, "flag": True},
    {"id": "x7", "term": "q alpha", "tags": ["a", "b"], "n": 1.5},
    {"term": "", "n": 2, "meta": {"k": 1}},
]


def _jsonl(path: Path, records: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_jsonl_keys_of_every_record_are_kept_in_first_seen_order(
    normalizer: Normalizer, tmp_path: Path
) -> None:
    src = _jsonl(tmp_path / "in.jsonl", JSONL)
    normalize_file(normalizer, NormalizeFileSpec.of(src, tmp_path / "out.csv", show_progress=False))
    rows = read_rows(tmp_path / "out.csv")
    assert list(rows[0])[:7] == ["term", "id", "flag", "tags", "n", "meta", "concept_id"]
    assert [r["id"] for r in rows] == ["", "3", "x7", ""]
    assert rows[2]["tags"] == '["a", "b"]' and rows[3]["meta"] == '{"k": 1}'
    assert [r["concept_id"] for r in rows] == ["A:1", "Z:1", "A:1", ""]
    jsonl = tmp_path / "out.jsonl"
    normalize_file(normalizer, NormalizeFileSpec.of(src, jsonl, show_progress=False))
    back = read_rows(jsonl)
    assert back[1]["id"] == 3 and back[2]["tags"] == ["a", "b"] and "id" not in back[0]


def test_jsonl_to_parquet_mixed_types_follow_the_documented_rule(
    normalizer: Normalizer, tmp_path: Path
) -> None:
    src = _jsonl(tmp_path / "in.jsonl", [*JSONL, {"term": "q zeta", "none": None}])
    out = tmp_path / "out.parquet"
    report = normalize_file(normalizer, NormalizeFileSpec.of(src, out, show_progress=False))
    table = pq.read_table(out)
    assert report.rows == table.num_rows == 5
    types = {f.name: f.type for f in table.schema}
    assert types["id"] == pa.string()  # int in one record, str in another
    assert types["flag"] == pa.bool_() and types["n"] == pa.float64()
    assert types["tags"] == types["meta"] == types["none"] == pa.string()
    assert table.column("id").to_pylist() == [None, "3", "x7", None, None]
    assert table.column("tags").to_pylist()[2] == '["a", "b"]'
    assert table.column("meta").to_pylist()[3] == '{"k": 1}'
    assert table.column("concept_id").to_pylist() == ["A:1", "Z:1", "A:1", None, "Z:1"]


@pytest.mark.parametrize(
    ("kinds", "expected"),
    [
        ({"int"}, pa.int64()),
        ({"int", "null"}, pa.int64()),
        ({"int", "float"}, pa.float64()),
        ({"bool"}, pa.bool_()),
        ({"bool", "int"}, pa.string()),
        ({"str", "int"}, pa.string()),
        ({"bigint"}, pa.string()),
        ({"list"}, pa.string()),
        ({"null"}, pa.string()),
    ],
)
def test_json_column_type_table(kinds: set[str], expected: pa.DataType) -> None:
    assert json_column_type(kinds) == expected


def test_a_clash_in_a_later_record_is_refused_naming_it_or_kept_under_a_prefix(
    normalizer: Normalizer, tmp_path: Path
) -> None:
    src = _jsonl(
        tmp_path / "in.jsonl",
        [{"term": "q alpha"}, {"term": "q zeta", "error": "mine", "concept_id": "X:9"}],
    )
    out = tmp_path / "out.jsonl"
    with pytest.raises(
        InputFormatError, match=r"already has column\(s\) concept_id, error, .*--prefix termnorm_"
    ):
        normalize_file(normalizer, NormalizeFileSpec.of(src, out, show_progress=False))
    assert not out.exists()
    report = normalize_file(
        normalizer, NormalizeFileSpec.of(src, out, prefix="termnorm_", show_progress=False)
    )
    assert report.prefix == "termnorm_"
    rows = read_rows(out)
    assert rows[1]["error"] == "mine" and rows[1]["concept_id"] == "X:9"  # kept as they were
    assert rows[1]["termnorm_concept_id"] == "Z:1" and rows[1]["termnorm_error"] is None
    assert rows[0]["termnorm_concept_id"] == "A:1" and "error" not in rows[0]
    pq_out = tmp_path / "out.parquet"
    normalize_file(
        normalizer, NormalizeFileSpec.of(src, pq_out, prefix="termnorm_", k=2, show_progress=False)
    )
    names = pq.read_table(pq_out).schema.names
    assert names == [
        "term",
        "error",
        "concept_id",
        "termnorm_concept_id",
        "termnorm_concept_name",
        "termnorm_score",
        "termnorm_matched_term",
        "termnorm_candidates",
        "termnorm_error",
    ]


def test_a_200k_character_cell_is_a_row_error_not_the_files(
    normalizer: Normalizer, tmp_path: Path
) -> None:
    src, out = tmp_path / "in.csv", tmp_path / "out.csv"
    huge = "y" * 200_000
    src.write_text(f'term,note\nq alpha,a\n"{huge}",b\nq zeta,"{huge}"\n')
    report = normalize_file(normalizer, NormalizeFileSpec.of(src, out, show_progress=False))
    rows = read_rows(out)
    assert (report.rows, report.errors) == (3, 1)
    assert rows[1]["error"].startswith("input too long") and rows[1]["term"] == huge
    assert rows[2]["concept_id"] == "Z:1" and rows[2]["note"] == huge  # passed through intact


def test_an_unterminated_quote_is_refused_at_its_line_not_swallowing_rows(
    normalizer: Normalizer, tmp_path: Path
) -> None:
    src, out = tmp_path / "in.csv", tmp_path / "out.csv"
    src.write_text('id,term\n2,q alpha\n3,"unterminated\n4,ataxia\n')
    with pytest.raises(InputFormatError, match=rf"^{src}:3: a quoted field .* never closed"):
        normalize_file(normalizer, NormalizeFileSpec.of(src, out, show_progress=False))
    assert not out.exists()
    src.write_text('term\nq alpha\n"q zeta')  # on the last line, no newline
    with pytest.raises(InputFormatError, match=rf"^{src}:3: a quoted field"):
        open_reader(src)
    src.write_text('term,note\nq alpha,"two\nlines"\n"q ""zeta""",x\n')  # closed: fine
    assert [r["note"] for c in open_reader(src).chunks(10) for r in c] == ["two\nlines", "x"]


@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_undecodable_bytes_strict_names_file_and_line(
    suffix: str, normalizer: Normalizer, tmp_path: Path
) -> None:
    src, out = tmp_path / f"bad{suffix}", tmp_path / f"out{suffix}"
    lines = [b"term", b"q alpha", b"caf\xe9", b"q zeta"]
    if suffix == ".jsonl":
        lines = [b'{"term": "%s"}' % line for line in lines[1:]]
    src.write_bytes(b"\n".join(lines) + b"\n")
    line, byte = (3, 4) if suffix == ".csv" else (2, 14)
    with pytest.raises(
        InputFormatError,
        match=rf"bad{suffix}:{line}: bytes b'\\xe9' at byte {byte} are not valid utf-8; .*"
        r"--encoding .*--errors replace",
    ):
        normalize_file(normalizer, NormalizeFileSpec.of(src, out, show_progress=False))
    assert not out.exists() and not list(tmp_path.glob("out*"))
    report = normalize_file(
        normalizer, NormalizeFileSpec.of(src, out, errors="replace", show_progress=False)
    )
    rows = read_rows(out)
    assert report.rows == len(rows) == 3 and report.replaced_lines == [line]
    assert rows[1]["term"] == "caf\ufffd" and [rows[0]["concept_id"], rows[2]["concept_id"]] == [
        "A:1",
        "Z:1",
    ]
    report = normalize_file(
        normalizer, NormalizeFileSpec.of(src, out, encoding="latin-1", show_progress=False)
    )
    assert read_rows(out)[1]["term"] == "café" and report.replaced_lines == []


def test_other_encodings_and_unknown_ones(normalizer: Normalizer, tmp_path: Path) -> None:
    src, out = tmp_path / "in.tsv", tmp_path / "out.tsv"
    src.write_bytes("term\nq alpha\ncafé\n".encode("utf-16"))
    report = normalize_file(
        normalizer, NormalizeFileSpec.of(src, out, encoding="utf-16", show_progress=False)
    )
    assert report.rows == 2 and read_rows(out)[1]["term"] == "café"
    with pytest.raises(ValueError, match="unknown encoding 'nope'; use a Python codec name"):
        normalize_file(
            normalizer, NormalizeFileSpec.of(src, out, encoding="nope", show_progress=False)
        )


def test_readers_know_their_row_count_before_reading(tmp_path: Path) -> None:
    (tmp_path / "a.csv").write_text('term\n"two\nlines"\n\nlast\n')
    _jsonl(tmp_path / "a.jsonl", JSONL)
    pq.write_table(pa.table({"term": ["a", "b"]}), tmp_path / "a.parquet")
    counts = {s: open_reader(tmp_path / f"a{s}").num_rows for s in (".csv", ".jsonl", ".parquet")}
    assert counts == {".csv": 3, ".jsonl": 4, ".parquet": 2}
