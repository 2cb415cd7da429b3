"""Resumable checkpoints: model, relation/STY heads, optimizer, scheduler, RNG and sampler state.

Layout inside the output folder::

    MODEL_DIR/checkpoints/step-00000500/state.pt    one file per checkpoint (torch.save)
    MODEL_DIR/checkpoints/best/                     best model by dev metric (ST folder)

Checkpoints are written atomically (temp folder, then rename), so a kill during a save leaves
the previous checkpoint intact; only the newest ``keep`` step checkpoints are kept.
"""

from __future__ import annotations

import random
import re
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import torch

from termnorm._artifacts import atomic_dir

__all__ = [
    "CHECKPOINTS_DIR",
    "capture_rng",
    "latest_checkpoint",
    "load_checkpoint",
    "restore_rng",
    "save_checkpoint",
]

CHECKPOINTS_DIR = "checkpoints"
STATE_FILE = "state.pt"
_STEP = re.compile(r"^step-(\d+)$")


def capture_rng() -> dict[str, Any]:
    """Python, NumPy, torch and (when in use) the current CUDA device's RNG states."""
    state: dict[str, Any] = {
        "python": random.getstate(),
        "numpy": np.random.get_state(),
        "torch": torch.get_rng_state(),
    }
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        state["cuda"] = torch.cuda.get_rng_state()  # this process's device only
    return state


def restore_rng(state: dict[str, Any]) -> None:
    """Inverse of :func:`capture_rng`."""
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])
    if isinstance(state.get("cuda"), torch.Tensor) and torch.cuda.is_available():
        torch.cuda.set_rng_state(state["cuda"])  # onto the current device, whatever it is


def step_checkpoints(out: Path) -> list[tuple[int, Path]]:
    """``(step, folder)`` of the complete step checkpoints under ``out``, oldest first."""
    root = Path(out) / CHECKPOINTS_DIR
    found = []
    if root.is_dir():
        for child in root.iterdir():
            match = _STEP.match(child.name)
            if match and (child / STATE_FILE).is_file():
                found.append((int(match.group(1)), child))
    return sorted(found)


def latest_checkpoint(out: Path) -> Path | None:
    """Newest complete checkpoint folder under ``out`` (None when there is none)."""
    found = step_checkpoints(out)
    return found[-1][1] if found else None


def save_checkpoint(out: Path, step: int, state: dict[str, Any], keep: int = 2) -> Path:
    """Write ``state`` as checkpoint ``step`` and prune all but the newest ``keep``."""
    folder = Path(out) / CHECKPOINTS_DIR / f"step-{step:08d}"
    with atomic_dir(folder) as tmp:
        torch.save({**state, "step": step, "rng": capture_rng()}, tmp / STATE_FILE)
    for _, old in step_checkpoints(out)[: -max(1, keep)]:
        shutil.rmtree(old, ignore_errors=True)
    return folder


def load_checkpoint(folder: Path, device: torch.device | str = "cpu") -> dict[str, Any]:
    """Read a checkpoint written by :func:`save_checkpoint` (our own file: full unpickling)."""
    state: dict[str, Any] = torch.load(
        Path(folder) / STATE_FILE, map_location=device, weights_only=False
    )
    return state
