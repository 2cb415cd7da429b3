"""benchmarks/first_answer.py: runs a venv's ``termnorm normalize`` with a new empty cache and
a user's environment, and counts the CPU time of the whole process tree."""

from __future__ import annotations

import runpy
import stat
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "first_answer.py"

#: a stand-in for the venv's ``termnorm``: a child process that burns CPU, then the answer
#: (the cache it was given, whether it was empty, and the thread setting it saw)
FAKE_TERMNORM = """#!/bin/sh
"{python}" -c "sum(i * i for i in range(3_000_000))"
echo "$1 $2 $TERMNORM_CACHE $(ls -A "$TERMNORM_CACHE" | wc -l) threads=$OMP_NUM_THREADS"
"""


def _script() -> SimpleNamespace:
    """The benchmark's names (run as a module that is not ``__main__``)."""
    return SimpleNamespace(**runpy.run_path(str(SCRIPT), run_name="first_answer_bench"))


def test_the_quick_start_command_runs_with_an_empty_cache_and_is_timed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    command = tmp_path / "venv" / "bin" / "termnorm"
    command.parent.mkdir(parents=True)
    command.write_text(FAKE_TERMNORM.format(python=sys.executable))
    command.chmod(command.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    monkeypatch.setenv("TERMNORM_CACHE", str(tmp_path / "a-full-cache"))
    run = _script().first_answer(tmp_path / "venv", "heart attack")
    query, cache, entries, threads = run.answer.rsplit(" ", 3)
    assert query == "normalize heart attack"
    assert "termnorm-first-answer-" in cache and not Path(cache).exists()  # removed after
    assert entries == "0" and threads == "threads="
    assert run.cpu_s == pytest.approx(run.user_s + run.sys_s)
    assert run.cpu_s > 0.05 and run.wall_s > 0.05  # the grandchild's CPU time is counted


def test_a_venv_without_termnorm_is_refused_with_the_install_steps(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"pip install torch==2\.13\.0"):
        _script().first_answer(tmp_path, "heart attack")
