"""SIGTERM to a running ``termnorm train`` writes a checkpoint; ``--resume`` finishes the run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from termnorm.kg import KnowledgeGraph

_MAIN = "import sys; from termnorm.cli.main import main; main(sys.argv[1:])"


def _train_cmd(kg: Path, base: Path, out: Path, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-c",
        _MAIN,
        "train",
        "--kg",
        str(kg),
        "--out",
        str(out),
        "--base-model",
        str(base),
        "--steps",
        "400",
        "--k",
        "8",
        "--m",
        "2",
        "--max-length",
        "16",
        "--precision",
        "fp32",
        "--device",
        "cpu",
        "--loss",
        "coder",  # relation matrices must survive the interruption too
        "--no-freeze-embeddings",
        "--freeze-layers",
        "0",
        "--log-every",
        "1",
        "--checkpoint-every",
        "0",
        "--threads",
        "1",
        *extra,
    ]


def test_sigterm_checkpoints_and_resume_completes(
    tiny_bert_path: Path, tiny_kg_dir: Path, tmp_path: Path
) -> None:
    out = tmp_path / "model"
    env = {**os.environ, "TQDM_DISABLE": "1"}
    proc = subprocess.Popen(
        _train_cmd(tiny_kg_dir, tiny_bert_path, out),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        text=True,
    )
    log = out / "train_log.jsonl"
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and proc.poll() is None:
        if log.is_file() and len(log.read_text().splitlines()) >= 3:
            break
        time.sleep(0.05)
    assert proc.poll() is None, proc.communicate()[1][-2000:]
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=240)
    assert proc.returncode == 128 + signal.SIGTERM, err[-2000:]
    assert "rerun with --resume" in err
    checkpoints = list((out / "checkpoints").glob("step-*"))
    assert len(checkpoints) == 1
    stopped_at = int(checkpoints[0].name.split("-")[1])
    assert 3 <= stopped_at < 400
    assert not (out / "model.safetensors").exists()

    resumed = subprocess.run(
        [*_train_cmd(tiny_kg_dir, tiny_bert_path, out), "--resume"],
        capture_output=True,
        env=env,
        text=True,
        timeout=600,
    )
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert json.loads(resumed.stdout)["steps"] == 400
    steps = [json.loads(x)["step"] for x in log.read_text().splitlines()]
    assert steps == list(range(1, 401))
    assert (out / "model.safetensors").is_file() and (out / "relations").is_dir()
    KnowledgeGraph.load(tiny_kg_dir)  # the KG folder is untouched
