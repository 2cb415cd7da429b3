"""Running ``termnorm`` in-process the way a shell does: exit code, stdout, stderr."""

from __future__ import annotations

import pytest

from termnorm.cli.main import main


def run_main(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """``termnorm ARGS`` → (exit code, stdout, stderr)."""
    with pytest.raises(SystemExit) as done:
        main(args)
    captured = capsys.readouterr()
    return int(done.value.code or 0), captured.out, captured.err
