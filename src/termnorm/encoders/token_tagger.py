"""A trained span tagger's model folder: the token-classification network, the tokenizer's
chunking it is trained and run with, and the folder format (written and read here).

This is model-level, below both of its users: ``training/`` (rank 6) writes the folder and
cuts training texts with :func:`encode_chunks`; ``annotate/`` (rank 9) loads it and predicts
spans (:func:`termnorm.annotate.tagger.predict_spans`). Neither imports the other.

:class:`TokenTagger`: ``logits = W · dropout(BERT(x)) + b``, ``[B, T, len(LABELS)]``. A base
folder's default prompt (multilingual-e5's ``"query: "``) is not applied: the tagger
classifies the word pieces of sliding chunks, where a prompt would open the first chunk only,
and it is trained and run the same way, without it (:mod:`termnorm.encoders.prompting`
refuses a prompt with overflowing chunks).

Folder layout (written atomically by :func:`save_tagger`)::

    tagger.json        the card: format version, kind "span-tagger", labels, max_length and
                       stride, base model (path, fingerprint), corpora (path, format,
                       fingerprint, documents, mentions), training settings, epochs run and
                       the best one, dev span P/R/F1, training minutes, versions
    encoder/           the fine-tuned transformer and its tokenizer (Hugging Face folder)
    head.safetensors   the linear BIO head (``classifier.weight``, ``classifier.bias``)

:func:`load_tagger` reads it back; a folder without the card, with another format or kind,
or missing a part is refused with :class:`~termnorm.errors.ArtifactMismatchError` saying how
to train one.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file, save_file
from torch import nn
from transformers import AutoModel, AutoTokenizer, PreTrainedModel, PreTrainedTokenizerBase

from termnorm._artifacts import atomic_dir, read_versioned_card, write_card
from termnorm._version import __version__
from termnorm.encoders.bio import LABELS
from termnorm.errors import ArtifactMismatchError

__all__ = [
    "CARD_NAME",
    "TAGGER_FORMAT",
    "TokenTagger",
    "TrainedTagger",
    "encode_chunks",
    "load_tagger",
    "save_tagger",
]

CARD_NAME = "tagger.json"
TAGGER_FORMAT = 1
KIND = "span-tagger"
ENCODER_DIR = "encoder"
HEAD_FILE = "head.safetensors"
MAKE = "termnorm ner train --mentions CORPUS --out TAGGER"


class TokenTagger(nn.Module):
    """A transformer with a linear token-classification head (``len(labels)`` outputs)."""

    def __init__(
        self, encoder: PreTrainedModel, labels: tuple[str, ...] = LABELS, dropout: float = 0.1
    ) -> None:
        super().__init__()
        self.encoder = encoder
        self.labels = labels
        self.dropout = nn.Dropout(dropout)
        self.classifier = nn.Linear(int(encoder.config.hidden_size), len(labels))

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        """Logits ``[B, T, len(labels)]`` of each word piece."""
        hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask)
        return self.classifier(self.dropout(hidden.last_hidden_state))  # type: ignore[no-any-return]


def encode_chunks(tokenizer: Any, texts: Sequence[str], max_length: int, stride: int) -> Any:
    """The tokenizer's chunks of ``texts`` (``BatchEncoding`` with ``input_ids``,
    ``attention_mask``, ``offset_mapping`` and ``overflow_to_sample_mapping``), unpadded:
    at most ``max_length`` word pieces each, consecutive chunks sharing ``stride``."""
    if not 0 <= stride < max_length - 2:
        raise ValueError(f"stride must be in [0, max_length - 2), got {stride} for {max_length}")
    return tokenizer(
        list(texts),
        truncation=True,
        max_length=max_length,
        stride=stride,
        return_overflowing_tokens=True,
        return_offsets_mapping=True,
        return_token_type_ids=False,
    )


@dataclass
class TrainedTagger:
    """A loaded tagger: the network (eval mode), its tokenizer, its card and folder."""

    model: TokenTagger
    tokenizer: PreTrainedTokenizerBase
    card: dict[str, Any]
    path: Path

    @property
    def max_length(self) -> int:
        """Word pieces per chunk the tagger was trained on."""
        return int(self.card["max_length"])

    @property
    def stride(self) -> int:
        """Word pieces shared by consecutive chunks."""
        return int(self.card["stride"])


def save_tagger(
    model: TokenTagger, tokenizer: PreTrainedTokenizerBase, card: dict[str, Any], out: str | Path
) -> Path:
    """Write a tagger folder (module doc) atomically; ``card`` must give ``max_length`` and
    ``stride`` and may add anything JSON-ready. Returns the folder."""
    for key in ("max_length", "stride"):
        if key not in card:
            raise ValueError(f"the tagger card needs {key!r}")
    full = {
        "format_version": TAGGER_FORMAT,
        "kind": KIND,
        "labels": list(model.labels),
        "termnorm_version": __version__,
        "created": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "versions": {p: metadata.version(p) for p in ("torch", "transformers", "tokenizers")},
        **card,
    }
    with atomic_dir(out) as tmp:
        model.encoder.save_pretrained(str(tmp / ENCODER_DIR), safe_serialization=True)
        tokenizer.save_pretrained(str(tmp / ENCODER_DIR))
        head = {
            f"classifier.{k}": v.detach().cpu().contiguous()
            for k, v in model.classifier.state_dict().items()
        }
        save_file(head, str(tmp / HEAD_FILE))
        write_card(tmp, CARD_NAME, full)
    return Path(out)


def load_tagger(path: str | Path, device: str | torch.device | None = None) -> TrainedTagger:
    """The tagger of a folder :func:`save_tagger` wrote, in eval mode on ``device``
    (default CPU).

    Raises:
        ArtifactMismatchError: not a tagger folder (no card, another kind or format, a
            missing encoder or head).
    """
    folder = Path(path)
    card = read_versioned_card(folder, CARD_NAME, "ner", "span tagger", TAGGER_FORMAT, MAKE)
    if card.get("kind") != KIND:
        raise ArtifactMismatchError(
            f"{folder} holds a {card.get('kind')!r} card, not a span tagger; train one with '{MAKE}'"
        )
    for part in (folder / ENCODER_DIR / "config.json", folder / HEAD_FILE):
        if not part.is_file():
            raise ArtifactMismatchError(
                f"{folder} has no {part.relative_to(folder)}: retrain it with '{MAKE}'"
            )
    tokenizer = AutoTokenizer.from_pretrained(str(folder / ENCODER_DIR), local_files_only=True)
    encoder = AutoModel.from_pretrained(str(folder / ENCODER_DIR), local_files_only=True)
    model = TokenTagger(encoder, tuple(card["labels"]))
    head = load_file(str(folder / HEAD_FILE))
    model.classifier.load_state_dict({k.removeprefix("classifier."): v for k, v in head.items()})
    model.to(torch.device(device) if device is not None else torch.device("cpu"))
    model.eval()
    return TrainedTagger(model, tokenizer, card, folder)
