"""The base a span tagger starts from: a model folder's transformer and fast tokenizer (the
network and its folder: :mod:`termnorm.encoders.token_tagger`, below training and annotate).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from transformers import AutoModel, AutoTokenizer, PreTrainedModel, PreTrainedTokenizerBase

from termnorm.encoders.folder import read_model_folder
from termnorm.encoders.transformer import declared_max_length, lowercase_inputs
from termnorm.errors import ArtifactMismatchError

__all__ = ["TaggerBase", "load_base"]


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
