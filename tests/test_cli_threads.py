"""``--threads`` on every command that encodes text, so that a user on a shared machine can
limit each one; the value reaches torch's intra-op setting."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import torch
import typer
from typer.testing import CliRunner

from _cli import run_main
from _project_fixtures import build_index, write_codes
from termnorm.cli.main import _register, app
from termnorm.search.build import clear_caches

ENCODING_COMMANDS = [
    "normalize", "annotate", "neighbors", "serve", "bench", "train", "index build",
    "map init", "map run", "eval normalize", "eval annotate", "eval mcsm", "eval relation",
    "eval clustering", "eval relatedness", "eval linkpred", "rank hybrid", "rank combine",
    "rank train", "ner train",
]  # fmt: skip
"""Every command that runs an encoder (or trains one) on this machine's CPU."""


def _commands() -> dict[str, Any]:
    """Every leaf command of ``termnorm`` by its space-separated name."""
    _register()
    found: dict[str, Any] = {}

    def walk(command: Any, path: list[str]) -> None:
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, [*path, name])
        if not hasattr(command, "commands"):
            found[" ".join(path)] = command

    walk(typer.main.get_command(app), [])
    return found


@pytest.mark.parametrize("name", ENCODING_COMMANDS)
def test_every_encoding_command_takes_threads(name: str) -> None:
    assert name in _commands(), f"no command {name!r}: update ENCODING_COMMANDS"
    done = CliRunner().invoke(app, [*name.split(), "--help"], terminal_width=200)
    assert done.exit_code == 0, done.output
    assert "--threads" in done.output


@pytest.fixture()
def index(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, tiny_bert_path: Path) -> Path:
    """The tiny index, in a clean working folder and API cache (as a fresh process sees it)."""
    monkeypatch.setenv("TERMNORM_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("TERMNORM_PROJECT_DB", raising=False)
    monkeypatch.chdir(tmp_path)
    built = build_index(tmp_path, tiny_bert_path)
    clear_caches()  # no encoder kept from the build
    return built


@pytest.fixture()
def threads_set(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every value given to ``torch.set_num_threads`` while the test runs (then restored)."""
    seen: list[int] = []
    monkeypatch.setattr(torch, "set_num_threads", seen.append)
    return seen


def test_map_run_threads_reach_torch_for_this_run_only(
    index: Path, threads_set: list[int], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    init = ["map", "init", "labs", "--source", str(write_codes(tmp_path / "codes.csv"))]
    init += ["--code-column", "code", "--text-column", "label", "--index", str(index)]
    code, _out, err = run_main([*init, "--threads", "2"], capsys)
    assert code == 0, err
    threads_set.clear()
    code, out, err = run_main(["map", "run", "labs", "--no-progress", "--threads", "3"], capsys)
    assert code == 0, err
    assert threads_set == [3]
    code, out, err = run_main(["map", "status", "labs", "--json"], capsys)
    assert json.loads(out)["spec"]["threads"] == 2  # the project keeps what map init stored


def test_neighbors_threads_reach_torch(
    index: Path, threads_set: list[int], capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["neighbors", "heart attack", "--index", str(index), "--json", "--threads", "2"]
    code, out, err = run_main(args, capsys)
    assert code == 0, err
    assert threads_set == [2] and json.loads(out)[0]["neighbors"]


def test_run_project_refuses_threads_below_one_before_any_work(tmp_path: Path) -> None:
    from termnorm.projects import run_project

    with pytest.raises(ValueError, match="--threads must be at least 1, not 0"):
        run_project("nowhere", lambda spec, synonyms: None, db=tmp_path / "x.db", threads=0)  # type: ignore[arg-type,return-value]
    assert not (tmp_path / "x.db").exists()
