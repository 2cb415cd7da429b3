"""One run at a time per output: a second batch job on the same output fails at once with
"another run is writing this output" instead of deleting the first one's parts (two identical
jobs once crashed each other, ``part-000004.csv.tmp`` vanishing under the first)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from termnorm.io.output_lock import LOCK_NAME, OutputBusyError, OutputLock
from termnorm.io.resumable import PROGRESS_NAME, work_dir
from termnorm.search.batch import normalize_file
from termnorm.search.file_spec import NormalizeFileSpec
from test_batch_resume import ROWS, Interrupt, _failing_after, _leftovers
from test_normalize_files import fake_normalizer, read_rows, write_rows

HOLD = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o666)
fcntl.flock(fd, fcntl.LOCK_EX)
print("held", flush=True)
sys.stdin.read()
"""


def _busy(output: Path) -> str:
    return rf"another run is writing this output \({output}\); wait for it or choose another"


def test_a_second_run_fails_at_once_and_leaves_the_first_runs_parts(tmp_path: Path) -> None:
    src, out = tmp_path / "in.csv", tmp_path / "out.csv"
    write_rows(src, ROWS)
    base = fake_normalizer()
    flaky, _ = _failing_after(base, 2)
    with pytest.raises(Interrupt):  # an unfinished run: two parts written
        normalize_file(flaky, NormalizeFileSpec.of(src, out, chunk_rows=5, show_progress=False))
    parts = sorted(p.name for p in work_dir(out).iterdir())
    assert PROGRESS_NAME in parts and LOCK_NAME not in parts  # released when it stopped
    working, calls = _failing_after(base, 99)
    with OutputLock(work_dir(out), out):  # the first run again, still working
        for restart in (False, True):
            with pytest.raises(OutputBusyError, match=_busy(out)):
                normalize_file(
                    working,
                    NormalizeFileSpec.of(
                        src, out, chunk_rows=5, show_progress=False, restart=restart
                    ),
                )
        assert sorted(p.name for p in work_dir(out).iterdir()) == sorted([*parts, LOCK_NAME])
    assert calls == []  # refused before any row was normalized
    report = normalize_file(
        working, NormalizeFileSpec.of(src, out, chunk_rows=5, show_progress=False)
    )
    assert (report.resumed_from, report.rows) == (10, len(ROWS))
    assert [r["id"] for r in read_rows(out)] == [r["id"] for r in ROWS]
    assert _leftovers(tmp_path) == []


@pytest.mark.skipif(sys.platform == "win32", reason="the lock is fcntl.flock on POSIX")
def test_a_lock_held_by_another_process(tmp_path: Path) -> None:
    src, out = tmp_path / "in.tsv", tmp_path / "out.tsv"
    write_rows(src, ROWS)
    work_dir(out).mkdir()
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(work_dir(out) / LOCK_NAME)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        with pytest.raises(OutputBusyError, match=_busy(out)):
            normalize_file(fake_normalizer(), NormalizeFileSpec.of(src, out, show_progress=False))
    finally:
        holder.communicate("")  # the holder exits: the kernel releases its lock
    assert holder.returncode == 0
    report = normalize_file(
        fake_normalizer(), NormalizeFileSpec.of(src, out, show_progress=False)
    )  # a stale file
    assert report.rows == len(ROWS) and not work_dir(out).exists()


def test_the_ray_driver_holds_the_lock_of_its_output_folder(tmp_path: Path) -> None:
    pytest.importorskip("ray")
    from termnorm.search.ray_batch import normalize_file_ray

    src, out = tmp_path / "in.parquet", tmp_path / "out"
    pq.write_table(pa.table({"term": ["q alpha", "q zeta"]}), src)
    with OutputLock(out, out), pytest.raises(OutputBusyError, match=_busy(out)):
        normalize_file_ray(fake_normalizer, NormalizeFileSpec.of(src, out, show_progress=False))
    assert not out.exists() or not any(out.iterdir())


def test_the_lock_is_exclusive_and_released(tmp_path: Path) -> None:
    first = OutputLock(tmp_path / "w", "OUT")
    with pytest.raises(OutputBusyError, match=r"\(OUT\); wait for it or choose another --output"):
        OutputLock(tmp_path / "w", "OUT")
    first.release()
    first.release()  # idempotent
    assert not (tmp_path / "w" / LOCK_NAME).exists()
    with OutputLock(tmp_path / "w", "OUT") as again:
        assert again.held
    assert not again.held
