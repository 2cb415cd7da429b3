"""A read-only cache or output folder is refused with what to change, not a raw [Errno 30].

Tests run as root, where ``chmod`` does not stop writes: a read-only file system is simulated
by making ``os.access`` (the early check) or ``tempfile.mkdtemp`` (the write) fail as it does
on one.
"""

from __future__ import annotations

import errno
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

from _cli import run_main
from termnorm import paths
from termnorm._artifacts import atomic_dir
from termnorm.cli.main import _user_message
from termnorm.errors import NotWritableError

CACHE_FIX = r"set TERMNORM_CACHE to a writable folder"
OUT_FIX = r"choose a writable output \(another --out or --output\)"


def read_only(monkeypatch: pytest.MonkeyPatch, root: Path) -> None:
    """``os.access(PATH, W_OK)`` is false and ``mkdtemp`` raises EROFS under ``root``."""
    real_access: Callable[..., bool] = os.access
    real_mkdtemp = tempfile.mkdtemp

    def access(path: object, mode: int, *args: object, **kwargs: object) -> bool:
        if mode & os.W_OK and Path(str(path)).resolve().is_relative_to(root.resolve()):
            return False
        return real_access(path, mode, *args, **kwargs)

    def mkdtemp(
        suffix: str | None = None, prefix: str | None = None, dir: str | None = None
    ) -> str:
        if dir is not None and Path(dir).resolve().is_relative_to(root.resolve()):
            raise OSError(errno.EROFS, "Read-only file system", str(dir))
        return real_mkdtemp(suffix, prefix, dir)

    monkeypatch.setattr(os, "access", access)
    monkeypatch.setattr(tempfile, "mkdtemp", mkdtemp)


def test_a_write_in_a_read_only_output_folder_names_the_option(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TERMNORM_CACHE", str(tmp_path / "cache"))
    read_only(monkeypatch, tmp_path / "ro")
    (tmp_path / "ro").mkdir()
    with (
        pytest.raises(
            NotWritableError, match=rf"cannot write .*ro.*Read-only file system; {OUT_FIX}"
        ),
        atomic_dir(tmp_path / "ro" / "idx"),
    ):
        pass
    with pytest.raises(NotWritableError, match=OUT_FIX):
        paths.ensure_writable(tmp_path / "ro" / "new" / "idx")
    paths.ensure_writable(tmp_path / "rw" / "idx")  # a writable one passes, creating nothing
    assert not (tmp_path / "rw").exists()


def test_a_read_only_cache_says_to_set_termnorm_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TERMNORM_CACHE", str(tmp_path / "ro" / "cache"))
    (tmp_path / "ro").mkdir()
    read_only(monkeypatch, tmp_path / "ro")
    with pytest.raises(NotWritableError, match=CACHE_FIX):
        paths.ensure_writable(paths.cache_dir() / "default-index-abc")
    with pytest.raises(NotWritableError, match=CACHE_FIX), paths.writing(paths.cache_dir()):
        raise OSError(errno.EROFS, "Read-only file system", str(paths.cache_dir() / "onnx"))


def test_other_os_errors_pass_through(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError), paths.writing(tmp_path):
        raise FileNotFoundError(errno.ENOENT, "No such file", str(tmp_path / "x"))


def test_the_onnx_export_cache(
    tiny_bert_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("onnxruntime")
    from termnorm.encoders import TermEncoder, onnx_export

    monkeypatch.setenv("TERMNORM_CACHE", str(tmp_path / "ro" / "cache"))
    monkeypatch.setattr(onnx_export, "_writable", lambda root: False)  # the model is installed
    (tmp_path / "ro" / "cache").mkdir(parents=True)
    read_only(monkeypatch, tmp_path / "ro")
    with pytest.raises(NotWritableError, match=rf"cache.*onnx.*{CACHE_FIX}"):
        onnx_export.onnx_graph(TermEncoder.load(tiny_bert_path, device="cpu"))


def test_index_build_refuses_a_read_only_out_before_encoding(
    tiny_kg_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    read_only(monkeypatch, tmp_path / "ro")
    (tmp_path / "ro").mkdir()
    argv = ["index", "build", "--kg", str(tiny_kg_dir), "--model", str(tmp_path / "no-model")]
    code, _, err = run_main([*argv, "--out", str(tmp_path / "ro" / "idx")], capsys)
    assert code == 1 and "cannot write" in err and "another --out" in err
    assert "Errno" not in err and len(err.strip().splitlines()) == 1


def test_the_cli_explains_any_read_only_file_system_error(tmp_path: Path) -> None:
    said = _user_message(OSError(errno.EROFS, "Read-only file system", str(tmp_path / "o.csv")))
    assert said.startswith(f"cannot write {tmp_path / 'o.csv'}: Read-only file system;")
    assert _user_message(ValueError("plain")) == "plain"
