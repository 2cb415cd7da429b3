"""Repository files a new user meets: .gitignore, benchmark scripts' defaults."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
WORKING_FOLDERS = ("kg", "idx", "models", "rankers", "kge")


def _ignored(path: str) -> bool:
    """Whether git ignores ``path`` (relative to the repository root)."""
    done = subprocess.run(["git", "check-ignore", "-q", "--no-index", path], cwd=ROOT, check=False)
    return done.returncode == 0


@pytest.mark.skipif(
    shutil.which("git") is None or not (ROOT / ".git").exists(), reason="needs a git checkout"
)
def test_readme_working_folders_are_ignored_but_not_the_package() -> None:
    for folder in WORKING_FOLDERS:
        assert _ignored(f"{folder}/medic/kg.json"), folder
    assert not _ignored("src/termnorm/kg/build.py")
    assert not _ignored("src/termnorm/kge/train.py")


def test_gitignore_anchors_the_working_folders() -> None:
    lines = (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()
    for folder in WORKING_FOLDERS:
        assert f"/{folder}/" in lines
        assert f"{folder}/" not in lines  # unanchored would hide src/termnorm/{folder}/
