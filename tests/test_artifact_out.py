"""Writing artifact folders: ``--out`` guards (never wipe a user's folder) and permissions."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from termnorm._artifacts import prepare_output
from termnorm.api import build_index
from termnorm.cli.main import main
from termnorm.errors import ArtifactMismatchError
from termnorm.io.tables import atomic_file

HP_OBO = Path(__file__).parent / "fixtures" / "kg" / "hpo" / "hp.obo"


def _user_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "notes.txt").write_text("keep me")
    return folder


def _kg_build(out: Path | str, *extra: str) -> int | str | None:
    """Run ``termnorm kg build`` on the HPO fixture; the exit code (0 on success)."""
    with pytest.raises(SystemExit) as exc:
        main(["kg", "build", "--add", f"obo:{HP_OBO}", "--out", str(out), *extra])
    return exc.value.code


def test_kg_build_refuses_a_non_kg_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _user_folder(tmp_path)
    assert _kg_build(folder) == 1
    err = capsys.readouterr().err
    assert "already exists and is not empty; pass --overwrite" in err
    assert (folder / "notes.txt").read_text() == "keep me"


def test_kg_build_replaces_a_folder_only_with_overwrite(tmp_path: Path) -> None:
    out = tmp_path / "kg"
    assert _kg_build(out) == 0
    assert _kg_build(out) == 1  # an earlier KG folder too: never replaced silently
    assert _kg_build(out, "--overwrite") == 0
    assert (out / "kg.json").is_file()
    folder = _user_folder(tmp_path)
    assert _kg_build(folder, "--overwrite") == 0
    assert (folder / "kg.json").is_file() and not (folder / "notes.txt").exists()


def test_kg_build_out_dot_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(_user_folder(tmp_path))
    assert _kg_build(".", "--overwrite") == 1
    err = capsys.readouterr().err
    assert "cannot replace the current folder" in err and "PosixPath" not in err
    assert Path("notes.txt").read_text() == "keep me"


def test_index_build_refuses_a_non_index_folder_before_any_work(tmp_path: Path) -> None:
    folder = _user_folder(tmp_path)
    with pytest.raises(ArtifactMismatchError, match=r"already exists and is not empty"):
        build_index(tmp_path / "no-such-kg", out=folder)
    assert (folder / "notes.txt").read_text() == "keep me"


def test_index_build_cli_refuses_and_names_overwrite(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _user_folder(tmp_path)
    with pytest.raises(SystemExit):
        main(["index", "build", "--kg", str(tmp_path / "kg"), "--out", str(folder)])
    assert "--overwrite" in capsys.readouterr().err
    assert (folder / "notes.txt").read_text() == "keep me"


def test_prepare_output_allows_new_and_empty_folders_only(tmp_path: Path) -> None:
    assert prepare_output(tmp_path / "new") == tmp_path / "new"
    (tmp_path / "empty").mkdir()
    prepare_output(tmp_path / "empty")
    (tmp_path / "file").write_text("x")
    with pytest.raises(ArtifactMismatchError, match="is a file"):
        prepare_output(tmp_path / "file", overwrite=True)


def test_built_folders_and_files_follow_the_umask(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        assert _kg_build(tmp_path / "kg") == 0
        with atomic_file(tmp_path / "out.csv") as tmp:
            tmp.write_text("a\n")
    finally:
        os.umask(old)
    kg = tmp_path / "kg"
    assert stat.S_IMODE(kg.stat().st_mode) == 0o755
    files = [p for p in kg.rglob("*") if p.is_file()]
    assert files and {stat.S_IMODE(p.stat().st_mode) for p in files} == {0o644}
    assert stat.S_IMODE((tmp_path / "out.csv").stat().st_mode) == 0o644
