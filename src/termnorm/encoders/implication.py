"""The implication-number head of a multi-task candidate generator, and its predictor.

A mention may need several codes ("breast and ovarian cancer" → two). The MTCG (Liang et al.
2021, "A multi-perspective combined recall and rank framework for Chinese procedure
terminology normalization", section 3.1.1) predicts how many from the mention's [CLS] vector:

    ŷ = softmax(W₂ · max(0, W₁ · h_[CLS] + b₁) + b₂)    over the classes {1, 2, ≥3}

(the paper's feed-forward block; hidden size = the transformer's). A trained head lives inside
the sentence-transformers model folder, where sentence-transformers ignores it::

    MODEL_DIR/implication_head/config.json          {"in_features", "hidden", "classes",
                                                     "token": "cls", "format_version"}
    MODEL_DIR/implication_head/model.safetensors    the two linear layers

so the folder still loads as a plain encoder for indexing. :func:`load_implication_predictor`
reads a folder's transformer and head; :meth:`ImplicationPredictor.predict` returns 1, 2 or 3
(3 = "three or more") per text.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import torch
from torch import nn

from termnorm.errors import ArtifactMismatchError

if TYPE_CHECKING:
    from termnorm.encoders.transformer import TermEncoder

__all__ = [
    "IMPLICATION_CLASSES",
    "IMPLICATION_DIR",
    "ImplicationHead",
    "ImplicationPredictor",
    "has_implication_head",
    "load_implication_predictor",
]

IMPLICATION_DIR = "implication_head"
IMPLICATION_CLASSES = (1, 2, 3)
"""The implication numbers the head predicts (index i of its logits = class i + 1; 3 = ≥ 3)."""
FORMAT_VERSION = 1
_WEIGHTS = "model.safetensors"


class ImplicationHead(nn.Module):
    """Feed-forward classifier ``[B, in_features] -> logits [B, 3]`` (see module doc).

    Args:
        in_features: size of the [CLS] vector (the transformer's hidden size).
        hidden: size of the inner layer (default: ``in_features``).
        dropout: dropout before the output layer while training.
    """

    def __init__(self, in_features: int, hidden: int | None = None, dropout: float = 0.1) -> None:
        super().__init__()
        self.in_features = in_features
        self.hidden = hidden or in_features
        self.inner = nn.Linear(in_features, self.hidden)
        self.dropout = nn.Dropout(dropout)
        self.out = nn.Linear(self.hidden, len(IMPLICATION_CLASSES))

    def forward(self, cls_vectors: torch.Tensor) -> torch.Tensor:
        """Logits ``[B, 3]`` of the [CLS] vectors ``[B, in_features]``."""
        return self.out(self.dropout(torch.relu(self.inner(cls_vectors))))  # type: ignore[no-any-return]

    def save(self, model_dir: str | Path) -> Path:
        """Write ``model_dir/implication_head/`` (config + safetensors); the folder written."""
        from safetensors.torch import save_file

        folder = Path(model_dir) / IMPLICATION_DIR
        folder.mkdir(parents=True, exist_ok=True)
        state = {k: v.detach().cpu().contiguous() for k, v in self.state_dict().items()}
        save_file(state, str(folder / _WEIGHTS))
        config = {
            "in_features": self.in_features,
            "hidden": self.hidden,
            "classes": list(IMPLICATION_CLASSES),
            "token": "cls",
            "format_version": FORMAT_VERSION,
        }
        (folder / "config.json").write_text(json.dumps(config, indent=2) + "\n")
        return folder

    @classmethod
    def load(cls, model_dir: str | Path) -> ImplicationHead:
        """The head saved in ``model_dir`` (in eval mode, on the CPU).

        Raises:
            ArtifactMismatchError: the folder has no (readable) implication head.
        """
        from safetensors.torch import load_file

        folder = Path(model_dir) / IMPLICATION_DIR
        if not (folder / "config.json").is_file() or not (folder / _WEIGHTS).is_file():
            raise ArtifactMismatchError(
                f"{model_dir} has no implication-number head ({IMPLICATION_DIR}/config.json and "
                f"{IMPLICATION_DIR}/{_WEIGHTS}): train the model with 'termnorm train "
                "--objective mtcg ...', or pass --implication MODEL naming such a model"
            )
        config = json.loads((folder / "config.json").read_text())
        if config.get("format_version") != FORMAT_VERSION or tuple(config.get("classes", ())) != (
            IMPLICATION_CLASSES
        ):
            raise ArtifactMismatchError(
                f"{folder}: implication head of format {config.get('format_version')} with "
                f"classes {config.get('classes')}; this termnorm reads format {FORMAT_VERSION} "
                f"with classes {list(IMPLICATION_CLASSES)}: retrain with --objective mtcg"
            )
        head = cls(int(config["in_features"]), int(config["hidden"]))
        head.load_state_dict(load_file(str(folder / _WEIGHTS)))
        return head.eval()


def has_implication_head(model_dir: str | Path) -> bool:
    """Whether ``model_dir`` holds an implication head (its config file)."""
    return (Path(model_dir) / IMPLICATION_DIR / "config.json").is_file()


class ImplicationPredictor:
    """Predicts each text's implication number with an encoder's transformer and a head.

    Args:
        encoder: the model the head was trained with (its torch transformer runs here,
            whatever runtime the encoder is bound to for vectors).
        head: the trained :class:`ImplicationHead`.
        batch_size: texts per forward pass.
    """

    def __init__(self, encoder: TermEncoder, head: ImplicationHead, batch_size: int = 64) -> None:
        hidden = int(encoder.model.config.hidden_size)
        if head.in_features != hidden:
            raise ArtifactMismatchError(
                f"the implication head reads {head.in_features}-d [CLS] vectors but the encoder "
                f"{encoder.path} has hidden size {hidden}: load the head from the folder of the "
                "model it was trained with"
            )
        self.encoder = encoder
        self.head = head.to(encoder.device).eval()
        self.batch_size = batch_size

    @torch.inference_mode()
    def probabilities(self, texts: Sequence[str]) -> np.ndarray:
        """Class probabilities ``[n, 3]`` (float32) for the implication numbers 1, 2, ≥3."""
        out = np.zeros((len(texts), len(IMPLICATION_CLASSES)), dtype=np.float32)
        model = self.encoder.model
        was_training = model.training
        model.eval()
        try:
            for start in range(0, len(texts), self.batch_size):
                chunk = list(texts[start : start + self.batch_size])
                tokens = self.encoder.tokenize(chunk)
                hidden = model(**tokens).last_hidden_state  # [B, T, H]
                logits = self.head(hidden[:, 0].float())  # [B, 3]
                out[start : start + len(chunk)] = torch.softmax(logits, -1).cpu().numpy()
        finally:
            model.train(was_training)
        return out

    def predict(self, texts: Sequence[str]) -> np.ndarray:
        """The implication number of each text: int64 ``[n]`` with values 1, 2 or 3 (≥ 3)."""
        if len(texts) == 0:
            return np.zeros(0, dtype=np.int64)
        return self.probabilities(texts).argmax(axis=1).astype(np.int64) + 1


def load_implication_predictor(
    model_dir: str | Path,
    encoder: TermEncoder | None = None,
    device: str | torch.device | None = None,
) -> ImplicationPredictor:
    """The predictor of a model folder written by ``termnorm train --objective mtcg``.

    Args:
        model_dir: the sentence-transformers folder holding ``implication_head/``.
        encoder: the already loaded encoder of that folder, to share its weights (default:
            load it from ``model_dir``).
        device: where a newly loaded encoder runs (default: CUDA when present).

    Raises:
        ArtifactMismatchError: the folder has no implication head (trained with another
            objective), or the head does not fit the encoder.
    """
    head = ImplicationHead.load(model_dir)
    if encoder is None:
        from termnorm.encoders.transformer import TermEncoder

        encoder = TermEncoder.load(model_dir, device=device)
    return ImplicationPredictor(encoder, head)
