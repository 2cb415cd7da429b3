"""Running ``termnorm`` in-process the way a shell does: exit code, stdout, stderr."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
import typer

from termnorm.cli.main import main

# `termnorm train` flags for the 2-layer tiny BERT on CPU: small batches, fp32, nothing frozen
TINY_TRAIN_ARGS = ["--k", "8", "--m", "2", "--max-length", "16", "--precision", "fp32"]
TINY_TRAIN_ARGS += ["--device", "cpu", "--no-freeze-embeddings", "--freeze-layers", "0"]


def run_main(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """``termnorm ARGS`` → (exit code, stdout, stderr)."""
    with pytest.raises(SystemExit) as done:
        main(args)
    captured = capsys.readouterr()
    return int(done.value.code or 0), captured.out, captured.err


def command_app(register: Callable[[typer.Typer], None]) -> typer.Typer:
    """A root Typer app with one command module registered (``eval_cmd.register``, ...)."""
    root = typer.Typer()

    @root.callback()
    def _root() -> None:
        """Test root."""

    register(root)
    return root


def heavy_modules_after_registering(modules: Sequence[str]) -> list[str]:
    """Which of ``modules`` a fresh interpreter has imported once every command group is
    registered (``termnorm --help``'s cost): registering must stay cheap."""
    script = (
        "import json, sys; from termnorm.cli.main import _register; _register(); "
        f"print(json.dumps([m for m in {list(modules)!r} if m in sys.modules]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")},
    )
    return list(json.loads(done.stdout))
