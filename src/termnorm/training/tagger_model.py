"""The span tagger's network: a transformer encoder and a linear BIO head over its word
pieces, and the base it starts from.

``logits = W · dropout(BERT(x)) + b``, ``[B, T, len(LABELS)]``; trained with the token-level
cross-entropy over the labelled word pieces (special tokens are ignored).

A base folder's default prompt (multilingual-e5's ``"query: "``) is not applied: the tagger
classifies the word pieces of sliding chunks, where a prompt would open the first chunk only,
and it is trained and run the same way, without it (:mod:`termnorm.encoders.prompting`
refuses a prompt with overflowing chunks).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn
from transformers import AutoModel, AutoTokenizer, PreTrainedModel, PreTrainedTokenizerBase

from termnorm.encoders.folder import read_model_folder
from termnorm.encoders.transformer import declared_max_length, lowercase_inputs
from termnorm.errors import ArtifactMismatchError
from termnorm.training.tagger_bio import LABELS

__all__ = ["TaggerBase", "TokenTagger", "load_base"]


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


@dataclass
class TaggerBase:
    """A loaded base model: the transformer, its fast tokenizer, the longest input it takes
    (word pieces) and the folder it came from."""

    model: PreTrainedModel
    tokenizer: PreTrainedTokenizerBase
    max_length: int
    path: Path


def load_base(path: str | Path) -> TaggerBase:
    """The transformer of a model folder (a Hugging Face folder or the Transformer of a
    sentence-transformers folder, as :mod:`termnorm.encoders` reads them), offline.

    Raises:
        ArtifactMismatchError: not a model folder, or one without a fast tokenizer (the
            tagger needs its offset mapping).
    """
    folder = read_model_folder(path)
    tokenizer = AutoTokenizer.from_pretrained(str(folder.transformer), local_files_only=True)
    if not tokenizer.is_fast:
        raise ArtifactMismatchError(
            f"{path} has no fast tokenizer (tokenizer.json): the span tagger needs its offset "
            "mapping; save the tokenizer with a current transformers"
        )
    if folder.do_lower_case:
        lowercase_inputs(tokenizer, folder)
    model = AutoModel.from_pretrained(str(folder.transformer), local_files_only=True)
    return TaggerBase(model, tokenizer, declared_max_length(folder, tokenizer, model), Path(path))
