"""The plain ranker as a standard sentence-transformers ``CrossEncoder`` folder.

A plain cross-encoder (BERT-rank) is a transformer, the [CLS] vector and one linear logit,
``sigmoid(logit)`` its probability: exactly sentence-transformers' modular ``CrossEncoder``
(release 6 and later) of three modules, which this module writes without importing it::

    config.json  model.safetensors  tokenizer.json  tokenizer_config.json ...   0: Transformer
    1_Pooling/config.json                         1: Pooling, mode cls
    2_Dense/config.json  2_Dense/model.safetensors  2: Dense H -> 1, identity, "scores"
    modules.json  config_sentence_transformers.json  (CrossEncoder, activation Sigmoid)

so ``CrossEncoder(folder).predict(pairs)`` gives the ranker's probabilities (the tokenizer's
``model_max_length`` is the ranker's pair length). A keyword-attentive ranker has no such
form (its attention mask and head are its own) and keeps its transformer in ``model/``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch
from torch import nn

__all__ = ["DENSE_DIR", "MODULES_FILE", "is_standard_folder", "read_dense_head", "write_modules"]

MODULES_FILE = "modules.json"
POOLING_DIR = "1_Pooling"
DENSE_DIR = "2_Dense"
_WEIGHTS = "model.safetensors"
_MODULES = [
    ("", "sentence_transformers.base.modules.transformer.Transformer"),
    (POOLING_DIR, "sentence_transformers.sentence_transformer.modules.pooling.Pooling"),
    (DENSE_DIR, "sentence_transformers.base.modules.dense.Dense"),
]


def is_standard_folder(folder: Path) -> bool:
    """Whether ``folder`` holds a standard CrossEncoder (its ``modules.json``)."""
    return (folder / MODULES_FILE).is_file()


def write_modules(folder: Path, head: nn.Linear) -> None:
    """Write the sentence-transformers files of the module doc around the transformer and
    tokenizer already saved at the root of ``folder``; ``head`` is the [CLS] -> logit layer."""
    from safetensors.torch import save_file

    hidden = int(head.in_features)
    files: dict[str, dict[str, Any] | list[Any]] = {
        MODULES_FILE: [
            {"idx": i, "name": str(i), "path": path, "type": kind}
            for i, (path, kind) in enumerate(_MODULES)
        ],
        "config_sentence_transformers.json": {
            "model_type": "CrossEncoder",
            "activation_fn": "torch.nn.modules.activation.Sigmoid",
        },
        f"{POOLING_DIR}/config.json": {"embedding_dimension": hidden, "pooling_mode": "cls"},
        f"{DENSE_DIR}/config.json": {
            "in_features": hidden,
            "out_features": 1,
            "bias": True,
            "activation_function": "torch.nn.modules.linear.Identity",
            "module_input_name": "sentence_embedding",
            "module_output_name": "scores",
        },
    }
    for name, data in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    state = {f"linear.{k}": v.detach().cpu().contiguous() for k, v in head.state_dict().items()}
    save_file(state, str(folder / DENSE_DIR / _WEIGHTS))


def read_dense_head(folder: Path) -> dict[str, torch.Tensor]:
    """The head's ``weight`` and ``bias`` from ``2_Dense/`` (what :func:`write_modules`
    wrote)."""
    from safetensors.torch import load_file

    state = load_file(str(folder / DENSE_DIR / _WEIGHTS))
    return {k.removeprefix("linear."): v for k, v in state.items()}
