"""Weight-space averages of encoders fine-tuned from one base: model soups and WiSE-FT.

- **Soup** (Wortsman et al., 2022a): ``θ = Σ_i w_i θ_i`` over models fine-tuned from one base
  (uniform ``w_i = 1/n`` by default).
- **WiSE-FT** (Wortsman et al., 2022b, "Robust fine-tuning of zero-shot models"): the two-model
  case with the base, ``θ = α·θ_fine-tuned + (1 − α)·θ_base``. It keeps part of what the base
  knew; the paper's default mixing coefficient is α = 0.5.

Parameters are read from and written to a sentence-transformers folder's
``model.safetensors``; the average is computed in float32 and stored in the first model's
dtype. Buffers only one side has (a base's ``embeddings.position_ids``) are left out. A
folder's stored fingerprint record (``termnorm_fingerprint.json``) is rewritten for the new
weights.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

import torch

from termnorm.encoders.fingerprint import FINGERPRINT_FILE, store_fingerprint

__all__ = ["FINETUNED_FILE", "WEIGHTS_FILE", "average_weights", "soup", "wise_ft_in_place"]

WEIGHTS_FILE = "model.safetensors"
FINETUNED_FILE = "finetuned.safetensors"  # the weights before WiSE-FT, kept beside them


def _weights_file(folder: Path) -> Path:
    path = Path(folder) / WEIGHTS_FILE
    if not path.is_file():
        raise FileNotFoundError(
            f"{path} not found: give a sentence-transformers model folder with its weights in "
            f"{WEIGHTS_FILE} (save older .bin models again with save_pretrained)"
        )
    return path


def average_weights(
    states: Sequence[dict[str, torch.Tensor]], weights: Sequence[float], names: Sequence[str]
) -> dict[str, torch.Tensor]:
    """``Σ_i w_i θ_i`` over the first state's parameters (see module doc).

    Raises:
        ValueError: fewer than two states, weights that are not one per state or do not sum
            to 1, or a state lacking a parameter of the first or holding it in another shape
            (not fine-tuned from the same base); ``names`` label the states in the message.
    """
    if len(states) < 2:
        raise ValueError("averaging needs at least two models")
    if len(weights) != len(states) or abs(sum(weights) - 1.0) > 1e-6:
        raise ValueError(f"give one weight per model, summing to 1 (got {list(weights)})")
    first = states[0]
    for name, state in zip(names[1:], states[1:], strict=True):
        bad = [k for k in first if k not in state or state[k].shape != first[k].shape]
        if bad:
            raise ValueError(
                f"{name} lacks or reshapes {len(bad)} parameters of {names[0]} (e.g. {bad[0]}): "
                "only models fine-tuned from one base can be averaged"
            )
    mixed: dict[str, torch.Tensor] = {}
    for key, tensor in first.items():
        total = torch.zeros_like(tensor, dtype=torch.float32)
        for w, state in zip(weights, states, strict=True):
            total += w * state[key].float()
        mixed[key] = total.to(tensor.dtype)
    return mixed


def _load(path: Path) -> dict[str, torch.Tensor]:
    """The tensors of a safetensors file, or of a model folder's ``model.safetensors``."""
    from safetensors.torch import load_file

    return load_file(str(_weights_file(path) if path.is_dir() else path))


def _save(state: dict[str, torch.Tensor], path: Path) -> None:
    from safetensors.torch import save_file

    tmp = path.with_suffix(".tmp")
    save_file(state, str(tmp), metadata={"format": "pt"})
    tmp.replace(path)  # a kill mid-write leaves the old weights
    if (path.parent / FINGERPRINT_FILE).is_file():
        store_fingerprint(path.parent)


def soup(out: Path, models: Sequence[Path], weights: Sequence[float] | None = None) -> None:
    """Write ``out``: the first model's folder with the weighted average of all weights.

    Raises:
        FileNotFoundError: a model folder without ``model.safetensors``.
        ValueError: see :func:`average_weights`.
    """
    weights = list(weights) if weights is not None else [1 / len(models)] * len(models)
    mixed = average_weights([_load(Path(m)) for m in models], weights, [str(m) for m in models])
    shutil.copytree(models[0], out, dirs_exist_ok=True)
    _save(mixed, Path(out) / WEIGHTS_FILE)


def wise_ft_in_place(model: Path, base: Path, alpha: float) -> None:
    """WiSE-FT: ``model``'s weights become ``α·θ_model + (1 − α)·θ_base``.

    The fine-tuned weights stay beside them as ``finetuned.safetensors``, so another α can be
    mixed later without retraining; running it again mixes from those, not from a mix.

    Raises:
        ValueError: α outside (0, 1], or models not fine-tuned from one base.
        FileNotFoundError: a folder without ``model.safetensors``.
    """
    if not 0.0 < alpha <= 1.0:
        raise ValueError(f"the WiSE-FT alpha must be in (0, 1], got {alpha}")
    model = Path(model)
    kept = model / FINETUNED_FILE
    if not kept.is_file():
        shutil.copy2(_weights_file(model), kept)
    states = [_load(kept), _load(Path(base))]
    mixed = average_weights(states, [alpha, 1.0 - alpha], [str(model), str(base)])
    _save(mixed, model / WEIGHTS_FILE)
