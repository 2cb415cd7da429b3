"""What the CLI tells a user: help texts as written, ranges checked before any work, labels
that say what a number is."""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest
import typer
from rich.text import Text

from _cli import run_main
from termnorm.cli._config_options import PlainHelpCommand
from termnorm.cli.index_cmd import _summary
from termnorm.cli.main import _register, app
from termnorm.errors import ArtifactMismatchError
from termnorm.search.space_matcher import SearchConfig
from termnorm.search.stages.ranker.ranker import Ranker


@pytest.fixture(autouse=True)
def private_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    """A command that gets past its checks must not build the default index in the real cache."""
    monkeypatch.setenv("TERMNORM_CACHE", str(tmp_path / "cache"))


def _commands(command: Any, path: str) -> Iterator[tuple[str, Any]]:
    yield path, command
    for name, sub in getattr(command, "commands", {}).items():
        yield from _commands(sub, f"{path} {name}")


def test_every_help_text_survives_rich_markup() -> None:
    """Typer renders help through Rich markup: ``termnorm[onnx]`` must not lose ``[onnx]``."""
    _register()
    lost = []
    for path, command in _commands(typer.main.get_command(app), "termnorm"):
        texts = [("help", command.help or "")]
        texts += [
            (p.opts[0] if p.opts else p.name, getattr(p, "help", "") or "") for p in command.params
        ]
        for name, text in texts:
            text = inspect.cleandoc(text).replace("\b", "")  # Click's no-rewrap mark
            if isinstance(command, PlainHelpCommand):  # click prints it as it is: no escapes
                if "\\[" in text:
                    lost.append(f"{path} {name} (plain help shows the backslash)")
            elif Text.from_markup(text).plain != text.replace("\\[", "["):
                lost.append(f"{path} {name}")
    assert lost == []


def test_runtime_help_names_the_onnx_extra(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_main(["index", "build", "--help"], capsys)
    assert code == 0 and "termnorm[onnx]" in out.replace("\n", "").replace("│", "").replace(" ", "")


@pytest.mark.parametrize(
    ("argv", "option"),
    [
        (["normalize", "x", "--min-score", "2"], "--min-score"),
        (["normalize", "x", "--min-score", "-1.5"], "--min-score"),
        (["normalize", "x", "--sieve-threshold", "1.2"], "--sieve-threshold"),
        (["normalize", "x", "--max-chars", "0"], "--max-chars"),
        (["eval", "normalize", "m.txt", "--min-score", "2"], "--min-score"),
        (["eval", "normalize", "m.txt", "--sieve-threshold", "-2"], "--sieve-threshold"),
        (["rank", "train", "--sieve-threshold", "3"], "--sieve-threshold"),
    ],
)
def test_cosine_options_out_of_range_are_refused_before_any_work(
    argv: list[str], option: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_main(argv, capsys)
    said = " ".join(err.replace("│", " ").split())
    assert code == 2 and f"Invalid value for '{option}': Input should be" in said


@pytest.mark.parametrize("field", ["min_score", "threshold"])
def test_search_config_refuses_a_threshold_that_is_not_a_cosine(field: str) -> None:
    with pytest.raises(ValueError, match=rf"{field} is a cosine and must be in \[-1, 1\], got 2"):
        SearchConfig(**{field: 2.0})
    assert getattr(SearchConfig(**{field: -1.0}), field) == -1.0


def test_index_info_shows_kept_relations_apart_from_dropped_rows() -> None:
    info = {
        "path": "idx",
        "model": {
            "path": "m",
            "pooling": "mean",
            "max_length": 32,
            "fingerprint": "f",
            "dimension": 8,
        },
        "kg": {"path": "kg", "fingerprint": "k"},
        "backend": {"terms": {"backend": "exact"}, "concepts": {"backend": "exact"}},
        "counts": {"terms": 3, "concepts": 2, "relations": 293496, "orphan_relations": 7},
    }
    rows = dict(_summary(info))
    assert rows["relations"] == "293496"
    assert rows["dropped"] == "orphan_relations 7"


def test_a_ranker_mismatch_names_a_missing_kg_fingerprint() -> None:
    trained = {"kg_fingerprint": "abc", "model_fingerprint": "m" * 20, "pooling": "mean"}
    ranker = Ranker(model=None, card={"index": {**trained, "path": "idx/a"}})  # type: ignore[arg-type]
    index = SimpleNamespace(
        card={"kg": {"fingerprint": ""}, "model": {"fingerprint": "m" * 20, "pooling": "mean"}}
    )
    with pytest.raises(
        ArtifactMismatchError,
        match=r"this index has KG none \(an index of an unsaved KG\), model m{12} \(mean pooling\)",
    ):
        ranker.check_index(index)  # type: ignore[arg-type]
