"""A cross-encoder scoring (mention, candidate) pairs, keyword-attentive or plain.

:class:`KeywordCrossEncoder` is the keyword-attentive ranker of Liang et al. (2021, §3.2):
a pretrained BERT-like encoder reads ``[CLS] [PS] [PT] mention [SEP] candidate [SEP]`` with
the per-example mask of :mod:`termnorm.search.stages.ranker.keyword_mask` ([PS] attends only to the site
keywords of the pair, [PT] only to the type keywords), and the head maps the mean of the
final hidden states of [CLS], [PS] and [PT] to one logit; ``sigmoid(logit)`` is the
probability that the candidate is the mention's concept. ``plain=True`` is the baseline
without keyword tokens ("BERT-rank"): ``[CLS] mention [SEP] candidate [SEP]``, head on [CLS].

It starts from any model folder :class:`~termnorm.encoders.TermEncoder` reads (default
all-MiniLM-L6-v2), [PS] and [PT] added as special tokens initialised as [CLS]; the folder's
default prompt, when it has one, goes before the mention and the candidate. Saved, it is a
folder with ``cross_encoder.json`` (plain or not, max length, dropout, the prompt): a plain
one is a sentence-transformers ``CrossEncoder`` folder (:mod:`.standard_folder`), a
keyword-attentive one has ``model/`` (weights and tokenizer) and ``head.safetensors``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import torch
from torch import nn
from transformers import AutoModel, AutoTokenizer, PreTrainedModel, PreTrainedTokenizerBase

from termnorm.encoders.folder import read_model_folder
from termnorm.encoders.transformer import default_model_path, lowercase_inputs
from termnorm.errors import ArtifactMismatchError
from termnorm.kg.keywords import KeywordVocabulary
from termnorm.search.stages.ranker.keyword_mask import (
    KEYWORD_TOKENS,
    PS_POSITION,
    PT_POSITION,
    encode_pairs,
    keyword_attention_mask,
)
from termnorm.search.stages.ranker.standard_folder import (
    is_standard_folder,
    read_dense_head,
    write_modules,
)

__all__ = ["CONFIG_FILE", "DEFAULT_PAIR_LENGTH", "HEAD_FILE", "MODEL_DIR", "KeywordCrossEncoder"]

DEFAULT_PAIR_LENGTH = 64
"""Tokens of a (mention, candidate) pair, special tokens included."""
MODEL_DIR = "model"
HEAD_FILE = "head.safetensors"
CONFIG_FILE = "cross_encoder.json"


class KeywordCrossEncoder(nn.Module):
    """Pairs → logits ``[B]`` (module doc). ``keywords`` is needed unless ``plain``."""

    def __init__(
        self,
        model: PreTrainedModel,
        tokenizer: PreTrainedTokenizerBase,
        keywords: KeywordVocabulary | None = None,
        plain: bool = False,
        max_length: int = DEFAULT_PAIR_LENGTH,
        dropout: float = 0.1,
        prompt: str = "",
    ) -> None:
        super().__init__()
        if not plain and keywords is None:
            raise ValueError("a keyword-attentive cross-encoder needs a keyword vocabulary")
        self.model = model
        self.tokenizer = tokenizer
        self.keywords = keywords
        self.plain = plain
        self.max_length = max_length
        self.prompt = prompt
        self.dropout = nn.Dropout(dropout)
        self.head = nn.Linear(int(model.config.hidden_size), 1)

    @property
    def device(self) -> torch.device:
        """Where the weights are."""
        return self.head.weight.device

    # ------------------------------------------------------------------ building
    @classmethod
    def from_pretrained(
        cls,
        path: str | Path | None = None,
        keywords: KeywordVocabulary | None = None,
        plain: bool = False,
        max_length: int = DEFAULT_PAIR_LENGTH,
        dropout: float = 0.1,
        seed: int = 0,
    ) -> KeywordCrossEncoder:
        """A new ranker over the transformer of the model folder ``path`` (default
        all-MiniLM-L6-v2), [PS]/[PT] added unless ``plain``; the head is seeded by ``seed``."""
        folder = read_model_folder(Path(path) if path is not None else default_model_path())
        tokenizer = AutoTokenizer.from_pretrained(str(folder.transformer), local_files_only=True)
        if folder.do_lower_case:
            lowercase_inputs(tokenizer, folder)
        model = AutoModel.from_pretrained(str(folder.transformer), local_files_only=True)
        if not plain:
            tokenizer.add_special_tokens(
                {"additional_special_tokens": list(KEYWORD_TOKENS)},
                replace_extra_special_tokens=False,
            )
            old = model.get_input_embeddings().weight.shape[0]
            model.resize_token_embeddings(len(tokenizer), mean_resizing=False)
            weights = model.get_input_embeddings().weight
            with torch.no_grad():
                cls_id = int(tokenizer.cls_token_id or 0)
                weights[old:] = weights[cls_id]
        torch.manual_seed(seed)
        return cls(model, tokenizer, keywords, plain, max_length, dropout, folder.prompt)

    # ------------------------------------------------------------------ forward
    def tokenize(
        self, mentions: Sequence[str], candidates: Sequence[str]
    ) -> dict[str, torch.Tensor]:
        """The padded pair tensors (:func:`~termnorm.search.stages.ranker.keyword_mask.encode_pairs`) on
        the ranker's device."""
        batch = encode_pairs(
            self.tokenizer,
            mentions,
            candidates,
            self.max_length,
            self.keywords,
            not self.plain,
            self.prompt,
        )
        return {k: v.to(self.device) for k, v in batch.items()}

    def forward(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        """Logits ``[B]`` of a :meth:`tokenize` batch."""
        inputs = {"input_ids": batch["input_ids"]}
        if "token_type_ids" in batch:
            inputs["token_type_ids"] = batch["token_type_ids"]
        if self.plain:
            hidden = self.model(**inputs, attention_mask=batch["attention_mask"]).last_hidden_state
            pooled = hidden[:, 0]  # [B, H]
        else:
            dtype = self.head.weight.dtype
            mask = keyword_attention_mask(
                batch["attention_mask"], batch["site"], batch["type"], dtype
            )  # [B, 1, T, T]
            hidden = self.model(**inputs, attention_mask=mask).last_hidden_state
            pooled = hidden[:, [0, PS_POSITION, PT_POSITION]].mean(dim=1)  # [B, H]
        return self.head(self.dropout(pooled)).squeeze(-1)  # type: ignore[no-any-return]

    @torch.inference_mode()
    def predict(
        self, mentions: Sequence[str], candidates: Sequence[str], batch_size: int = 64
    ) -> torch.Tensor:
        """Probabilities ``[len(mentions)]`` (float32, CPU), ``batch_size`` pairs a pass."""
        was_training = self.training
        self.eval()
        try:
            parts = [
                torch.sigmoid(
                    self(
                        self.tokenize(mentions[i : i + batch_size], candidates[i : i + batch_size])
                    )
                )
                .float()
                .cpu()
                for i in range(0, len(mentions), batch_size)
            ]
        finally:
            self.train(was_training)
        return torch.cat(parts) if parts else torch.zeros(0)

    # ------------------------------------------------------------------ persistence
    def save(self, folder: str | Path) -> Path:
        """Write the model into ``folder`` (module doc; the keyword vocabulary is the caller's
        to store)."""
        from safetensors.torch import save_file

        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        target = folder if self.plain else folder / MODEL_DIR
        if self.plain:  # CrossEncoder truncates pairs to the tokenizer's length
            self.tokenizer.model_max_length = self.max_length
        self.model.save_pretrained(str(target), safe_serialization=True)
        self.tokenizer.save_pretrained(str(target))
        if self.plain:
            write_modules(folder, self.head)
        else:
            head = {k: v.detach().cpu().contiguous() for k, v in self.head.state_dict().items()}
            save_file(head, str(folder / HEAD_FILE))
        config: dict[str, object] = {
            "plain": self.plain,
            "max_length": self.max_length,
            "dropout": self.dropout.p,
        }
        if self.prompt:  # the base folder's prompt goes on with the weights trained with it
            config["prompt"] = self.prompt
        (folder / CONFIG_FILE).write_text(json.dumps(config, indent=2) + "\n")
        return folder

    @classmethod
    def load(
        cls,
        folder: str | Path,
        keywords: KeywordVocabulary | None = None,
        device: str | torch.device | None = None,
    ) -> KeywordCrossEncoder:
        """The ranker :meth:`save` wrote, in either layout (module doc; ``keywords`` as it
        was trained with, unless plain).

        Raises:
            ArtifactMismatchError: a file is missing or unreadable (naming it).
        """
        from safetensors.torch import load_file

        folder = Path(folder)
        standard = is_standard_folder(folder)
        needed = (CONFIG_FILE,) if standard else (CONFIG_FILE, HEAD_FILE, MODEL_DIR)
        for name in needed:
            if not (folder / name).exists():
                raise ArtifactMismatchError(
                    f"{folder} is not a cross-encoder folder (no {name}); train one with "
                    "'termnorm rank train'"
                )
        config = json.loads((folder / CONFIG_FILE).read_text())
        source = str(folder if standard else folder / MODEL_DIR)
        tokenizer = AutoTokenizer.from_pretrained(source, local_files_only=True)
        model = AutoModel.from_pretrained(source, local_files_only=True)
        ranker = cls(
            model,
            tokenizer,
            keywords,
            bool(config["plain"]),
            int(config["max_length"]),
            float(config.get("dropout", 0.1)),
            str(config.get("prompt", "")),
        )
        head = read_dense_head(folder) if standard else load_file(str(folder / HEAD_FILE))
        ranker.head.load_state_dict(head)
        if device is not None:
            ranker.to(torch.device(device))
        ranker.eval()
        return ranker
