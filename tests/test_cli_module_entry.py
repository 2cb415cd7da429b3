"""``python -m termnorm`` and ``python -m termnorm.cli.main`` run the command, as the
``termnorm`` script does (a module run without its ``__main__`` guard does nothing and
exits 0)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"


@pytest.mark.parametrize("module", ["termnorm", "termnorm.cli.main"])
def test_python_dash_m_prints_the_usage_and_exits_0(module: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    done = subprocess.run(
        [sys.executable, "-m", module, "--help"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Usage:" in done.stdout
    assert "Normalize medical terms to concept IDs" in done.stdout
    assert "annotate" in done.stdout  # the command groups are attached
