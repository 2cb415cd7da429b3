"""Pair inputs of a keyword-attentive cross-encoder, and its per-example attention mask.

Input of the keyword-attentive ranker (KAR, Liang et al. 2021, §3.2)::

    [CLS] [PS] [PT] mention [SEP] candidate [SEP]

[PS] ("site") and [PT] ("type") are two added special tokens at positions 1 and 2. Every
token of the mention or the candidate that overlaps a keyword span
(:meth:`~termnorm.kg.keywords.KeywordVocabulary.spans`) is flagged ``site`` or ``type``.

The attention mask (paper eq. 9, as an additive mask on the attention scores): row i says
which keys token i attends to. The [PS] row allows exactly [PS] itself and the site tokens of
the pair, the [PT] row exactly [PT] and the type tokens; every other row allows every
non-padding token (as in plain BERT), so [CLS] and the words see everything, [PS] and [PT]
included. Allowed entries are 0, the others the dtype's most negative value. The mask is
``[B, 1, T, T]``, the layout Hugging Face BERT models take as a ready 4D mask (used as is
by the eager and SDPA attention). Without keyword tokens (a plain cross-encoder,
``keyword_tokens=False``) the pair is ``[CLS] mention [SEP] candidate [SEP]`` with the usual
padding mask.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from transformers import PreTrainedTokenizerBase

from termnorm.encoders.prompting import tokenize_prompted
from termnorm.errors import ArtifactMismatchError
from termnorm.kg.keywords import KeywordVocabulary

__all__ = [
    "KEYWORD_TOKENS",
    "PS_POSITION",
    "PS_TOKEN",
    "PT_POSITION",
    "PT_TOKEN",
    "encode_pairs",
    "keyword_attention_mask",
]

PS_TOKEN = "[PS]"
PT_TOKEN = "[PT]"
KEYWORD_TOKENS = (PS_TOKEN, PT_TOKEN)
PS_POSITION = 1
PT_POSITION = 2


def keyword_attention_mask(
    attention_mask: torch.Tensor,
    site: torch.Tensor,
    type_: torch.Tensor,
    dtype: torch.dtype = torch.float32,
) -> torch.Tensor:
    """The additive mask ``[B, 1, T, T]`` of the module doc.

    Args:
        attention_mask: ``[B, T]``, 1 for real tokens, 0 for padding.
        site: ``[B, T]`` bool, the site-keyword tokens.
        type_: ``[B, T]`` bool, the type-keyword tokens.
        dtype: the dtype of the attention scores.
    """
    real = attention_mask.bool()  # [B, T]
    batch, length = real.shape
    allowed = real[:, None, :].expand(batch, length, length).clone()  # [B, Tq, Tk]
    ps_row = site.bool() & real
    ps_row[:, PS_POSITION] = True
    pt_row = type_.bool() & real
    pt_row[:, PT_POSITION] = True
    allowed[:, PS_POSITION, :] = ps_row
    allowed[:, PT_POSITION, :] = pt_row
    additive = torch.zeros(batch, length, length, dtype=dtype, device=attention_mask.device)
    additive.masked_fill_(~allowed, torch.finfo(dtype).min)
    return additive[:, None]  # [B, 1, T, T]


def _flags(
    offsets: Sequence[tuple[int, int]],
    sequence_ids: Sequence[int | None],
    spans: tuple[list[tuple[int, int, str]], list[tuple[int, int, str]]],
) -> tuple[list[bool], list[bool]]:
    """Per token: overlaps a site span, overlaps a type span (of its own text)."""
    site, kind_type = [], []
    for (start, end), seq in zip(offsets, sequence_ids, strict=True):
        hit = {"site": False, "type": False}
        if seq is not None and end > start:
            for s, e, kind in spans[seq]:
                if s < end and start < e:
                    hit[kind] = True
        site.append(hit["site"])
        kind_type.append(hit["type"])
    return site, kind_type


def encode_pairs(
    tokenizer: PreTrainedTokenizerBase,
    mentions: Sequence[str],
    candidates: Sequence[str],
    max_length: int,
    keywords: KeywordVocabulary | None = None,
    keyword_tokens: bool = True,
    prompt: str = "",
) -> dict[str, torch.Tensor]:
    """Padded tensors of ``(mentions[i], candidates[i])`` pairs (module doc).

    Returns ``input_ids``, ``attention_mask`` (``[B, T]``), ``token_type_ids`` when the
    tokenizer makes them, and with ``keyword_tokens`` the bool ``site`` and ``type`` flags
    ``[B, T]``. Pairs are truncated (longest first) to ``max_length`` tokens in all.
    ``prompt`` (the base model folder's default prompt) goes before the mention and before
    the candidate, as the bi-encoder reads each; keyword spans are found in the texts as given.

    Raises:
        ArtifactMismatchError: ``keyword_tokens`` with a tokenizer lacking [PS]/[PT], or a
            slow tokenizer (character offsets need a fast one).
    """
    if len(mentions) != len(candidates):
        raise ValueError(f"{len(mentions)} mentions but {len(candidates)} candidates")
    if not getattr(tokenizer, "is_fast", False):
        raise ArtifactMismatchError(
            "the ranker needs a fast tokenizer (tokenizer.json) to find keyword tokens; "
            "save the model's tokenizer with a current transformers"
        )
    extra = len(KEYWORD_TOKENS) if keyword_tokens else 0
    encoded = tokenize_prompted(
        tokenizer,
        list(mentions),
        prompt,
        list(candidates),
        truncation="longest_first",
        max_length=max_length - extra,
        return_offsets_mapping=keyword_tokens,
        padding=False,
    )
    rows: list[dict[str, list[int]]] = []
    if keyword_tokens:
        ids: list[int] = list(tokenizer.convert_tokens_to_ids(list(KEYWORD_TOKENS)))  # type: ignore[arg-type]
        if any(i is None or i == tokenizer.unk_token_id for i in ids):
            raise ArtifactMismatchError(
                "the tokenizer has no [PS]/[PT] tokens: load the ranker through "
                "KeywordCrossEncoder, which adds them"
            )
        vocabulary = keywords or KeywordVocabulary(frozenset(), frozenset(), "en")
    for i in range(len(mentions)):
        row = {"input_ids": list(encoded["input_ids"][i])}
        if "token_type_ids" in encoded:
            row["token_type_ids"] = list(encoded["token_type_ids"][i])
        if keyword_tokens:
            spans = (vocabulary.spans(mentions[i]), vocabulary.spans(candidates[i]))
            site, kind = _flags(encoded["offset_mapping"][i], encoded.sequence_ids(i), spans)
            row["input_ids"][1:1] = ids
            if "token_type_ids" in row:
                row["token_type_ids"][1:1] = [0, 0]
            row["site"] = [site[0], False, False, *site[1:]]
            row["type"] = [kind[0], False, False, *kind[1:]]
        rows.append(row)
    return _pad(rows, int(tokenizer.pad_token_id or 0))


def _pad(rows: list[dict[str, list[int]]], pad_id: int) -> dict[str, torch.Tensor]:
    width = max(len(r["input_ids"]) for r in rows)
    out: dict[str, torch.Tensor] = {
        "input_ids": torch.full((len(rows), width), pad_id, dtype=torch.long),
        "attention_mask": torch.zeros((len(rows), width), dtype=torch.long),
    }
    names = [n for n in ("token_type_ids", "site", "type") if n in rows[0]]
    for name in names:
        dtype = torch.bool if name in ("site", "type") else torch.long
        out[name] = torch.zeros((len(rows), width), dtype=dtype)
    for i, row in enumerate(rows):
        n = len(row["input_ids"])
        out["input_ids"][i, :n] = torch.tensor(row["input_ids"])
        out["attention_mask"][i, :n] = 1
        for name in names:
            out[name][i, :n] = torch.tensor(row[name], dtype=out[name].dtype)
    return out
