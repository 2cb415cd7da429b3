"""The modules after pooling: sentence-transformers' ``Dense`` and ``Normalize``, run in torch.

``Dense``:     y = act(W x + b)  (+ x, or + R x when the sizes differ, with ``use_residual``)
``Normalize``: y = x / ‖x‖₂

Weights are read from and written to the module folder as sentence-transformers does
(``model.safetensors`` with keys ``linear.weight``, ``linear.bias``, ``residual.weight``;
an older ``pytorch_model.bin`` is read too). Activations are ``torch.nn`` module classes named
by their dotted path (``torch.nn.modules.activation.Tanh``); any other path is refused.
"""

from __future__ import annotations

import importlib
import inspect
import json
from collections.abc import Sequence
from pathlib import Path

import torch
from torch import nn

from termnorm.encoders.folder import DenseSpec, NormalizeSpec
from termnorm.errors import ArtifactMismatchError

__all__ = ["Dense", "L2Normalize", "build_head", "save_head"]


def _activation(spec: DenseSpec) -> nn.Module:
    """An instance of the spec's ``torch.nn`` activation class (identity for ``None``)."""
    name = spec.activation
    if name is None:
        return nn.Identity()
    module, _, cls_name = name.rpartition(".")
    cls = None
    if module.startswith("torch"):
        try:
            cls = getattr(importlib.import_module(module), cls_name, None)
        except ImportError:
            cls = None
    if not (inspect.isclass(cls) and issubclass(cls, nn.Module)):
        raise ArtifactMismatchError(
            f"{spec.path / 'config.json'} names activation {name!r}, which is not a torch.nn "
            "module class; termnorm runs torch.nn activations only (e.g. "
            "torch.nn.modules.activation.Tanh)"
        )
    return cls()  # type: ignore[no-any-return]


class Dense(nn.Module):
    """sentence-transformers' ``Dense`` (see module doc); ``spec`` says where it came from."""

    def __init__(self, spec: DenseSpec) -> None:
        super().__init__()
        self.spec = spec
        self.linear = nn.Linear(spec.in_features, spec.out_features, bias=spec.bias)
        self.activation_function = _activation(spec)
        self.residual: nn.Linear | None = None
        if spec.use_residual and spec.in_features != spec.out_features:
            self.residual = nn.Linear(spec.in_features, spec.out_features, bias=False)

    @classmethod
    def load(cls, spec: DenseSpec) -> Dense:
        """The module with its weights from ``spec.path`` (every key must match)."""
        dense = cls(spec)
        weights = spec.weights
        if weights.suffix == ".safetensors":
            from safetensors.torch import load_file

            state = load_file(str(weights))
        else:
            state = torch.load(weights, map_location="cpu", weights_only=True)
        try:
            dense.load_state_dict(state)
        except RuntimeError as exc:
            raise ArtifactMismatchError(
                f"{weights} does not fit {spec.path}/config.json: {exc}"
            ) from exc
        return dense

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``[B, in_features] -> [B, out_features]``."""
        out = self.activation_function(self.linear(x))
        if self.spec.use_residual:
            out = out + (x if self.residual is None else self.residual(x))
        return out  # type: ignore[no-any-return]

    def save(self, folder: Path) -> None:
        """Write ``config.json`` and ``model.safetensors`` into ``folder``."""
        from safetensors.torch import save_file

        folder.mkdir(parents=True, exist_ok=True)
        (folder / "config.json").write_text(json.dumps(self.spec.config(), indent=2))
        state = {k: v.detach().contiguous().cpu() for k, v in self.state_dict().items()}
        save_file(state, str(folder / "model.safetensors"), metadata={"format": "pt"})


class L2Normalize(nn.Module):
    """sentence-transformers' ``Normalize``: ``x / ‖x‖₂`` over the last dimension."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Unit-length rows."""
        return nn.functional.normalize(x, p=2, dim=-1)


def build_head(specs: Sequence[DenseSpec | NormalizeSpec]) -> nn.Sequential:
    """The modules after pooling, weights loaded (an empty ``Sequential`` for none)."""
    return nn.Sequential(
        *(Dense.load(s) if isinstance(s, DenseSpec) else L2Normalize() for s in specs)
    )


def save_head(head: nn.Sequential, out: Path, first_index: int) -> list[dict[str, object]]:
    """Write each head module as ``<idx>_Dense`` / ``<idx>_Normalize``; its modules.json entries."""
    entries: list[dict[str, object]] = []
    for idx, module in enumerate(head, start=first_index):
        kind = "Dense" if isinstance(module, Dense) else "Normalize"
        if not isinstance(module, Dense | L2Normalize):
            raise TypeError(f"cannot save head module {type(module).__name__}")
        name = f"{idx}_{kind}"
        if isinstance(module, Dense):
            module.save(out / name)
        else:
            (out / name).mkdir(parents=True, exist_ok=True)
        entries.append(
            {
                "idx": idx,
                "name": str(idx),
                "path": name,
                "type": f"sentence_transformers.models.{kind}",
            }
        )
    return entries
