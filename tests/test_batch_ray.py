"""The Ray engine (issue 22): partitions of a Parquet file mapped by Ray Data actors into one
part each; the parts read in order equal the local engine's output row for row; a re-run
skips finished parts and finishes an interrupted job with every row exactly once."""

from __future__ import annotations

import functools
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from termnorm import api
from termnorm.errors import InputFormatError, MissingExtraError
from termnorm.io.resumable import ResumeError
from termnorm.io.tables import TableFormat, open_reader
from termnorm.search.batch import output_schema, row_spec
from termnorm.search.build import build
from termnorm.search.file_spec import RowOptions
from termnorm.search.ray_batch import JOB_NAME, Partition, _PartitionWorker, plan_partitions
from termnorm.search.spec import PipelineSpec

WORDS = ["fever", "headache", "", "chronic cough", "rash", "x" * 1200, "nausea and vomiting"]


@pytest.fixture()
def index_dir(tiny_kg_dir: Path, tiny_bert_path: Path, tmp_path: Path) -> Path:
    api.build_index(tiny_kg_dir, model=tiny_bert_path, out=tmp_path / "idx", show_progress=False)
    return tmp_path / "idx"


def _input(path: Path, rows: int, row_group: int = 10) -> Path:
    terms = [f"{WORDS[i % len(WORDS)]}" for i in range(rows)]
    table = pa.table({"id": list(range(rows)), "term": terms})
    pq.write_table(table, path, row_group_size=row_group)
    return path


def test_partitions_follow_files_and_rows(tmp_path: Path) -> None:
    src = _input(tmp_path / "a.parquet", 25, row_group=10)
    assert plan_partitions(src, 7) == [
        Partition(0, str(src), 0, 7),
        Partition(1, str(src), 7, 14),
        Partition(2, str(src), 14, 21),
        Partition(3, str(src), 21, 25),
    ]
    folder = tmp_path / "many"
    folder.mkdir()
    _input(folder / "b.parquet", 3)
    _input(folder / "a.parquet", 5)
    assert [(Path(p.path).name, p.start, p.stop) for p in plan_partitions(folder, 4)] == [
        ("a.parquet", 0, 4),
        ("a.parquet", 4, 5),
        ("b.parquet", 0, 3),
    ]
    (tmp_path / "a.csv").write_text("term\na\n")
    with pytest.raises(InputFormatError, match="--engine ray reads Parquet"):
        plan_partitions(tmp_path / "a.csv", 4)


def test_without_the_extra_it_says_which_to_install(
    index_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray → ImportError
    src = _input(tmp_path / "in.parquet", 3)
    with pytest.raises(MissingExtraError, match=r"ray is required .*pip install 'termnorm\[ray\]'"):
        api.normalize_file(src, tmp_path / "out", index=index_dir, engine="ray")


def test_a_partition_worker_writes_the_local_engines_rows(index_dir: Path, tmp_path: Path) -> None:
    """The actors' code, run in this process (the Ray run itself is the slow test below)."""
    src = _input(tmp_path / "in.parquet", 20, row_group=3)
    local = tmp_path / "local.parquet"
    api.normalize_file(src, local, index=index_dir, k=2, chunk_rows=6, show_progress=False)
    out = tmp_path / "out"
    out.mkdir()
    reader = open_reader(src)
    spec = row_spec(reader, RowOptions(k=2), TableFormat.PARQUET)
    schema = output_schema(reader.schema, spec)
    columns = [*reader.columns, *spec.added]
    factory = functools.partial(build, PipelineSpec(index=index_dir))
    worker = _PartitionWorker(factory, spec, str(out), columns, schema)
    partitions = plan_partitions(src, 6)
    batch = {
        key: [getattr(p, key) for p in partitions] for key in ("index", "path", "start", "stop")
    }
    done = worker(batch)
    assert done["index"] == [0, 1, 2, 3] and done["rows"] == [6, 6, 6, 2]
    assert done["error"] == ["", "", "", ""]
    assert _parts(out) == pq.read_table(local).to_pylist()
    assert not list(out.glob("*.tmp"))


def test_a_worker_that_cannot_load_its_index_reports_why(index_dir: Path, tmp_path: Path) -> None:
    src = _input(tmp_path / "in.parquet", 4)
    reader = open_reader(src)
    spec = row_spec(reader, RowOptions(), TableFormat.PARQUET)
    factory = functools.partial(build, PipelineSpec(index=tmp_path / "nope"))
    worker = _PartitionWorker(factory, spec, str(tmp_path), reader.columns, reader.schema)
    done = worker({"index": [0], "path": [str(src)], "start": [0], "stop": [4]})
    assert (
        done["error"][0].startswith("ArtifactMismatchError: ")
        and "no index.json" in done["error"][0]
    )
    assert not list(tmp_path.glob("part-*"))


def _parts(folder: Path) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for part in sorted(folder.glob("part-*.parquet")):
        rows += pq.read_table(part).to_pylist()
    return rows


@pytest.mark.slow  # about a minute: Ray starts, and each run starts actors importing torch
def test_ray_equals_local_row_for_row_and_resumes_after_lost_parts(
    local_ray: None, index_dir: Path, tmp_path: Path
) -> None:
    src = _input(tmp_path / "in.parquet", 40)
    local = tmp_path / "local.parquet"
    api.normalize_file(src, local, index=index_dir, k=3, chunk_rows=6, show_progress=False)
    expected = pq.read_table(local).to_pylist()
    out = tmp_path / "out"
    report = api.normalize_file(
        src, out, index=index_dir, k=3, chunk_rows=6, engine="ray", workers=2, show_progress=False
    )
    assert (report.rows, report.parts, report.skipped_parts) == (40, 7, 0)
    assert report.errors == sum(1 for i in range(40) if WORDS[i % len(WORDS)] in ("", "x" * 1200))
    assert _parts(out) == expected  # row for row, every column

    # an interrupted run: two parts never written, one left half-written
    (out / "part-000002.parquet").unlink()
    (out / "part-000005.parquet").rename(out / "part-000005.parquet.tmp")
    report = api.normalize_file(
        src, out, index=index_dir, k=3, chunk_rows=6, engine="ray", workers=1, show_progress=False
    )
    assert (report.parts, report.skipped_parts, report.resumed_from) == (2, 5, 28)
    assert report.rows == 40 and _parts(out) == expected
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith("part-")) == [JOB_NAME]

    with pytest.raises(ResumeError, match=r"job with other settings \(k: 3 → 2\).*--restart"):
        api.normalize_file(src, out, index=index_dir, k=2, chunk_rows=6, engine="ray")
    report = api.normalize_file(
        src,
        out,
        index=index_dir,
        k=2,
        chunk_rows=6,
        engine="ray",
        restart=True,
        show_progress=False,
    )
    assert (report.parts, report.rows) == (7, 40)


def test_ray_refuses_a_file_output_and_a_foreign_folder(index_dir: Path, tmp_path: Path) -> None:
    pytest.importorskip("ray")
    src = _input(tmp_path / "in.parquet", 3)
    with pytest.raises(ValueError, match="looks like a file; --engine ray writes a folder"):
        api.normalize_file(src, tmp_path / "o.parquet", index=index_dir, engine="ray")
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine")
    with pytest.raises(ResumeError, match=r"non-empty folder without _termnorm_job\.json"):
        api.normalize_file(src, mine, index=index_dir, engine="ray")
    assert (mine / "notes.txt").read_text() == "mine"
