"""``termnorm train`` on the command line: dev evaluation, config file, errors as one line."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from _cli import TINY_TRAIN_ARGS, run_main


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
        (["--config", "{tmp}/bad.json"], "unknown TrainConfig key.s. stepz"),
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
