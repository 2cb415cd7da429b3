"""Repository files a new user meets: .gitignore, benchmark scripts' defaults."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

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


@pytest.mark.parametrize("script", sorted((ROOT / "benchmarks").glob("*.py")), ids=lambda p: p.name)
def test_benchmark_defaults_are_relative_to_the_checkout(script: Path) -> None:
    """No path of one development machine (``/work/...``, a home folder): the data next to
    the checkout (``../shared/benchmarks``) and the README's working folders instead."""
    text = script.read_text(encoding="utf-8")
    for machine in ("/work/", "/home/", "/root/", "/tmp/bench"):
        assert machine not in text, f"{script.name} names {machine}"


def _speed_module() -> Any:
    """``benchmarks/speed.py`` loaded as a module (benchmarks are not a package)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("speed", ROOT / "benchmarks" / "speed.py")
    assert spec is not None and spec.loader is not None
    speed = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(speed)
    return speed


def test_speed_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    speed = _speed_module()
    assert ROOT.parent / "shared" / "benchmarks" == speed.BENCH
    assert (
        speed.DATASETS["ncbi_devel"] == speed.BENCH / "ncbi_disease" / "NCBIdevelopset_corpus.txt"
    )
    monkeypatch.setattr("sys.argv", ["speed.py"])
    parsed = speed.build_parser().parse_args([])
    assert parsed.index == ROOT / "idx" / "medic"
    assert parsed.build_kg == ROOT / "kg" / "medic"
    assert parsed.terms_file == ROOT / "kg" / "medic" / "terms.parquet"


def test_speed_table_sets_each_engine_beside_minilm_torch() -> None:
    """One row per model and engine, one column per thread count, with both ratios."""
    speed = _speed_module()

    def row(texts_per_s: float) -> dict[str, float]:
        return {
            "texts_per_s": texts_per_s,
            "ratio_vs_minilm_torch": texts_per_s / 400,
            "ratio_vs_sentence_transformers": texts_per_s / 200,
        }

    runs = {
        "1": {"minilm": {"torch": row(400)}, "model": {"onnx-int8": row(500)}},
        "2": {"minilm": {"torch": row(600)}, "model": {"onnx-int8": row(1000)}},
    }
    lines = speed.throughput_table(runs, Path("models/e5")).splitlines()
    assert lines[0].count("thread(s)") == 2
    assert lines[2] == "| MiniLM torch | 400 (1.00×, 2.00×) | 600 (1.50×, 3.00×) |"
    assert lines[3] == "| e5 onnx-int8 | 500 (1.25×, 2.50×) | 1,000 (2.50×, 5.00×) |"


def _recipe_settings(command: str) -> dict[str, str]:
    """The options of a ``termnorm train`` command line, without its data and output paths."""
    words = command.split("#")[0].split()
    settings = {words[i]: words[i + 1] for i in range(len(words) - 1) if words[i].startswith("--")}
    return {k: v for k, v in settings.items() if k not in {"--kg", "--out", "--mentions"}}


def test_train_help_recommends_the_documented_recipe(capsys: pytest.CaptureFixture[str]) -> None:
    """The recipe of the training page, the README's train example and ``train --help``
    agree."""
    from _cli import run_main

    page = (ROOT / "docs" / "training.md").read_text(encoding="utf-8").splitlines()
    marker = next(i for i, line in enumerate(page) if line.startswith("# the recipe that holds up"))
    recipe = _recipe_settings(page[marker + 1])
    assert recipe == {"--train-data": "od", "--steps": "3000", "--wise-alpha": "0.5"}
    readme = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    guide = next(line for line in readme if line.startswith("termnorm train --kg"))
    assert _recipe_settings(guide) == recipe
    code, out, _ = run_main(["train", "--help"], capsys)
    example = next(line for line in out.splitlines() if "termnorm train --kg" in line)
    assert code == 0 and _recipe_settings(example) == recipe
    assert "../shared/benchmarks/" in example  # a real path, not a bare file name


@pytest.mark.parametrize(
    "page",
    [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))],
    ids=lambda p: p.relative_to(ROOT).as_posix(),
)
def test_doc_commands_name_real_benchmark_paths(page: Path) -> None:
    """Benchmark files in the commands of the README and the docs pages are paths from the
    checkout (../shared/benchmarks)."""
    text = page.read_text(encoding="utf-8")
    for name in ("NCBItrainset_corpus.txt", "NCBIdevelopset_corpus.txt", "GSCplus_dev_gold.tsv"):
        for start in [i for i in range(len(text)) if text.startswith(name, i)]:
            before = text[max(0, start - 60) : start]
            if "`" in before or "--" in before or re.search(r"=\S*$", before):  # in a command
                assert "../shared/benchmarks/" in before, text[start - 60 : start + len(name)]
