"""``termnorm train`` on the command line: dev evaluation, config file, errors as one line,
one option per config field (with the field's default), help that shows every name whole."""

from __future__ import annotations

import dataclasses
import enum
import json
import re
import types
import typing
from pathlib import Path
from typing import Any, ClassVar

import pytest

import termnorm
from _cli import TINY_TRAIN_ARGS, run_main
from termnorm import api
from termnorm.errors import UnknownNameError
from termnorm.options import opt
from termnorm.training import TrainConfig, TrainResult
from termnorm.training.config.base import Section
from termnorm.training.objectives import OBJECTIVES


def test_train_with_dev_mentions_reports_and_keeps_the_best_model(
    tiny_bert_path: Path, tiny_kg_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dev = tmp_path / "dev.tsv"
    dev.write_text("T:0001\tcardiac infarction\nT:0002\tHTN\nT:0006\tpneumonitis\n")
    out = tmp_path / "model"
    code, stdout, _ = run_main(
        [
            "train",
            "--kg",
            str(tiny_kg_dir),
            "--out",
            str(out),
            "--base-model",
            str(tiny_bert_path),
            "--steps",
            "4",
            "--eval-every",
            "2",
            "--dev",
            str(dev),
            "--dev-format",
            "tsv",
            *TINY_TRAIN_ARGS,
        ],
        capsys,
    )
    assert code == 0
    summary = json.loads(stdout)
    assert summary["steps"] == 4 and 0.0 <= summary["dev_acc@1"] <= 1.0
    evals = [
        json.loads(x)
        for x in (out / "train_log.jsonl").read_text().splitlines()
        if "eval" in json.loads(x)
    ]
    assert [e["step"] for e in evals] == [2, 4]
    assert "## Dev results" in (out / "README.md").read_text()


def test_config_file_supplies_defaults_and_flags_override(
    tiny_bert_path: Path, tiny_kg_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({"steps": 3, "loss": "ms", "lr": 0.5, "hard_max_concepts": 5}))
    out = tmp_path / "model"
    args = ["train", "--kg", str(tiny_kg_dir), "--out", str(out), "--config", str(cfg)]
    code, _, _ = run_main(
        [*args, "--base-model", str(tiny_bert_path), "--lr", "1e-4", *TINY_TRAIN_ARGS], capsys
    )
    assert code == 0
    saved = json.loads((out / "training_config.json").read_text())
    assert saved["steps"] == 3 and saved["loss"] == "ms" and saved["hard_max_concepts"] == 5
    assert saved["lr"] == 1e-4


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--k", "16", "--m", "5"], r"--m must satisfy 2 <= m <= sqrt\(k\)"),
        (["--k", "1"], "--k must be at least 4"),
        (["--config", "{tmp}/bad.json"], r"bad.json: unknown TrainConfig key.s. stepz .*steps"),
        (["--dev", "{kg}/kg.json"], "--dev needs --dev-format"),
    ],
)
def test_impossible_settings_are_one_line_errors(
    tiny_kg_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    extra: list[str],
    message: str,
) -> None:
    (tmp_path / "bad.json").write_text('{"stepz": 3}')
    extra = [e.format(kg=tiny_kg_dir, tmp=tmp_path) for e in extra]
    code, _, err = run_main(
        ["train", "--kg", str(tiny_kg_dir), "--out", str(tmp_path / "m"), *extra], capsys
    )
    assert code == 1
    assert err.startswith("error: ")
    assert len(err.strip().splitlines()) == 1
    assert re.search(message, err)


def _capture_config(monkeypatch: pytest.MonkeyPatch) -> list[TrainConfig]:
    """Make ``termnorm train`` hand its parsed config over instead of training."""
    seen: list[TrainConfig] = []

    def fake_train(config: TrainConfig, resume: bool = False) -> TrainResult:
        seen.append(config)
        return TrainResult(Path(str(config.out)), 0)

    monkeypatch.setattr(api, "train", fake_train)
    return seen


def test_options_left_out_give_the_configs_defaults(
    tiny_kg_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen = _capture_config(monkeypatch)
    out = tmp_path / "m"
    code, _, _ = run_main(["train", "--kg", str(tiny_kg_dir), "--out", str(out)], capsys)
    assert code == 0
    assert seen == [TrainConfig(kg=tiny_kg_dir, out=out)]


def _other_value(field: dataclasses.Field[Any], kind: Any, path: Path) -> tuple[list[str], Any]:
    """Command-line words giving ``field`` a value other than its default, and that value."""
    default = field.default
    base = kind
    if typing.get_origin(kind) in (typing.Union, types.UnionType):
        base = next(a for a in typing.get_args(kind) if a is not type(None))
    flag = "--" + field.name.replace("_", "-")
    names = field.metadata.get("flag") or (f"{flag}/--no-{flag[2:]}" if base is bool else flag)
    on, _, off = names.partition("/")  # --x/--no-x, --keep-best/--keep-last, a lone --overwrite
    if field.name == "loss":  # a name of the objectives' registry
        return [on, "coder"], "coder"
    if base is bool:
        return [off if default else on], not default
    if typing.get_origin(base) is tuple:
        return [on, "a.tsv", on, "b.tsv"], ("a.tsv", "b.tsv")
    if isinstance(base, type) and issubclass(base, enum.Enum):
        value = next(member for member in base if member != default)
        return [on, value.value], value
    if base is Path:
        return [on, str(path)], path
    if base is str:
        return [on, "x"], "x"
    value = (default or 0) + (2 if base is int else 0.25)
    return [on, str(value)], value


def _option_fields() -> list[tuple[dataclasses.Field[Any], Any]]:
    """Every option's field and type: the shared settings' and each section's."""
    out = []
    for section in (TrainConfig, *(type(s) for s in TrainConfig().sections)):
        kinds = typing.get_type_hints(section)
        for field in dataclasses.fields(section):
            if not dataclasses.is_dataclass(kinds[field.name]):
                out.append((field, kinds[field.name]))
    return out


def test_every_config_field_is_an_option(
    tiny_kg_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen = _capture_config(monkeypatch)
    words: list[str] = []
    expected: dict[str, Any] = {}
    for field, kind in _option_fields():
        given, value = _other_value(field, kind, tiny_kg_dir)
        words += given
        expected[field.name] = value
    assert len(expected) == 79
    code, _, err = run_main(["train", *words], capsys)
    assert code == 0, err
    (config,) = seen
    assert {name: config.get(name) for name in expected} == expected


def _help(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[list[str], str]:
    """The option names ``termnorm train ARGS --help`` lists as entries, and its text."""
    code, out, _ = run_main(["train", *args, "--help"], capsys)
    assert code == 0
    entries = out.split("Options:", 1)[1].split("\n\n")[0]
    return re.findall(r"^  (--[a-z][a-z0-9-]*)", entries, re.M), out


def test_help_at_80_columns_shows_every_option_name_whole(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    names: set[str] = set()
    out = ""
    for loss in ["", *OBJECTIVES.names()]:
        _, text = _help(["--loss", loss] if loss else [], capsys)
        names |= set(re.findall(r"--[a-z][a-z0-9-]*", text))
        out += text
    for field, _ in _option_fields():
        flag = field.metadata.get("flag") or "--" + field.name.replace("_", "-")
        for name in flag.split("/"):
            assert name in names, name
        assert field.metadata["help"].split()[0] in out
    assert {"--resume", "--config", "--no-hard-negatives", "--keep-last"} <= names


def test_an_objectives_help_lists_the_shared_options_and_its_own_only(
    capsys: pytest.CaptureFixture[str],
) -> None:
    triplet, text = _help(["--loss", "triplet"], capsys)
    assert len(triplet) <= 30
    assert {"--kg", "--steps", "--od-ratio", "--texts-per-concept", "--resume"} <= set(triplet)
    assert not {"--m", "--negatives", "--inject-layer", "--kge", "--device"} & set(triplet)
    assert "Runtime options of every objective" in text and "--device" in text
    general, text = _help([], capsys)
    assert "--steps" in general and "--device" in general and "--od-ratio" not in general
    assert "'termnorm train --loss NAME --help' shows the options of objective NAME" in text
    mtcg, _ = _help(["--objective", "mtcg"], capsys)
    assert {"--negatives", "--relation-lr"} <= set(mtcg) and "--od-ratio" not in mtcg


def test_an_unknown_objective_lists_the_known_ones(
    tiny_kg_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_main(["train", "--kg", str(tiny_kg_dir), "--loss", "tripet"], capsys)
    assert code == 2
    text = " ".join(re.sub("[│╭╮╰╯─]", " ", err).split())  # click's error box, unwrapped
    assert re.search(
        r"unknown objective 'tripet' .*did you mean 'triplet'\? Known: ms, ms-v2", text
    )
    with pytest.raises(ValueError, match=r"unknown objective 'nope' .*Known: .*mtcg"):
        TrainConfig(loss="nope")


@dataclasses.dataclass
class _DummyConfig(Section):
    """A test objective's own settings."""

    name: ClassVar[str] = "dummy"
    dummy_weight: float = opt(1.0, "The dummy objective's weight.", min=0.0)


@dataclasses.dataclass
class _DummyRun:
    """What the dummy objective composes: a run that reports the weight it was given."""

    config: TrainConfig

    def train(self, resume: bool = False) -> TrainResult:
        weight = self.config.dummy.dummy_weight
        return TrainResult(Path(str(self.config.out)), 0, final_metrics={"dummy_weight": weight})


def _dummy_trainer(config: TrainConfig, *_: Any) -> _DummyRun:
    """The dummy objective's composition function ``(config, kg, mentions, evaluator,
    dist_info)``."""
    return _DummyRun(config)


def test_a_registered_objective_reaches_the_cli_and_the_api(
    tiny_kg_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One registration (a composition function and its options dataclass) and no other
    edit: ``termnorm train --loss dummy --dummy-weight`` and ``termnorm.train`` run it."""
    OBJECTIVES.register("dummy", _dummy_trainer, options=_DummyConfig, help="a test objective")
    try:
        args = ["train", "--kg", str(tiny_kg_dir), "--out", str(tmp_path / "m")]
        code, out, err = run_main([*args, "--loss", "dummy", "--dummy-weight", "2.5"], capsys)
        assert code == 0, err
        assert json.loads(out) == {"out": str(tmp_path / "m"), "steps": 0, "dummy_weight": 2.5}
        result = termnorm.train(kg=tiny_kg_dir, out=tmp_path / "a", loss="dummy", dummy_weight=1.5)
        assert result.final_metrics == {"dummy_weight": 1.5}
        options, _ = _help(["--loss", "dummy"], capsys)
        assert "--dummy-weight" in options and "--od-ratio" not in options
        code, _, err = run_main([*args, "--loss", "dummy", "--dummy-weight", "-1"], capsys)
        assert code != 0 and "--dummy-weight" in err
    finally:
        OBJECTIVES.unregister("dummy")
    assert "dummy_weight" not in TrainConfig().to_dict()
    with pytest.raises(UnknownNameError, match=r"unknown objective 'dummy' .*Known: ms, ms-v2"):
        termnorm.train(kg=tiny_kg_dir, out=tmp_path / "b", loss="dummy")
