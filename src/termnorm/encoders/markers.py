"""Mention markers ``[M_s]`` / ``[M_e]``: a term in its context, pooled over its own tokens.

A contextual mention (KRISSBERT, Zhang et al. 2022; the Italian KGE paper, §3.1) is a window
of text with the mention wrapped in two special tokens::

    "... patients with [M_s] renal cysts [M_e] and hepatic fibrosis ..."

The term vector of such a text is the pooling of the tokens strictly between the first
``[M_s]`` and the next ``[M_e]`` (the mention's tokens; to the end of the sequence when the end
marker was truncated away). A text without ``[M_s]`` is pooled as usual, over all its tokens,
so a model trained with markers still embeds bare terms exactly as a sentence-transformers
model does. An encoder knows its markers when its tokenizer has both tokens
(:func:`marker_ids`); :func:`add_mention_markers` adds them to a model (new embedding rows,
initialised as the mean of the existing rows).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # torch is imported by the callers
    import torch
    from transformers import PreTrainedTokenizerBase

    from termnorm.encoders.protocols import EncoderModel

__all__ = ["MENTION_END", "MENTION_START", "add_mention_markers", "marker_ids", "mention_mask"]

MENTION_START = "[M_s]"
MENTION_END = "[M_e]"


def marker_ids(tokenizer: PreTrainedTokenizerBase) -> tuple[int, int] | None:
    """``(id of [M_s], id of [M_e])`` when the tokenizer has both as single tokens, else None."""
    vocab = tokenizer.get_vocab()
    if MENTION_START in vocab and MENTION_END in vocab:
        return int(vocab[MENTION_START]), int(vocab[MENTION_END])
    return None


def input_embeddings(model: Any) -> torch.Tensor:
    """The input (word) embedding matrix ``[V, H]`` of a Hugging Face model."""
    import torch

    weight = model.get_input_embeddings().weight
    if not isinstance(weight, torch.Tensor):  # pragma: no cover - every HF model has one
        raise TypeError(f"{type(model).__name__} has no input embedding matrix")
    return weight


def add_mention_markers(encoder: EncoderModel) -> tuple[int, int]:
    """Add ``[M_s]`` and ``[M_e]`` as special tokens to ``encoder`` (once), grow its input
    embeddings by two rows set to the mean of the existing rows, and return their IDs.

    The encoder then pools marked texts over the mention (see the module doc); saving it
    writes the extended tokenizer, so a loaded copy does the same.
    """
    import torch

    found = marker_ids(encoder.tokenizer)
    if found is not None:
        return found
    encoder.tokenizer.add_special_tokens(
        {"additional_special_tokens": [MENTION_START, MENTION_END]},
        replace_extra_special_tokens=False,
    )
    ids = marker_ids(encoder.tokenizer)
    if ids is None:  # pragma: no cover - add_special_tokens guarantees them
        raise RuntimeError("the tokenizer did not take the mention markers")
    old = input_embeddings(encoder.model).shape[0]
    encoder.model.resize_token_embeddings(len(encoder.tokenizer), mean_resizing=False)
    weight = input_embeddings(encoder.model)  # [V + 2, H]
    with torch.no_grad():
        mean = weight[:old].mean(dim=0)
        for row in ids:
            if row >= old:
                weight[row] = mean
    encoder.markers = ids
    encoder.reset_fingerprint()
    return ids


def mention_mask(
    input_ids: torch.Tensor, attention_mask: torch.Tensor, markers: tuple[int, int] | None
) -> torch.Tensor:
    """The pooling mask ``[B, T]``: in rows holding ``[M_s]``, the tokens strictly between the
    first ``[M_s]`` and the next ``[M_e]`` (or the end of the row); elsewhere the attention
    mask. With ``markers`` None the attention mask itself."""
    import torch

    if markers is None:
        return attention_mask
    start_id, end_id = markers
    is_start = input_ids == start_id  # [B, T]
    has = is_start.any(dim=1)  # [B]
    if not bool(has.any()):
        return attention_mask
    after_start = is_start.long().cumsum(dim=1) > 0  # [B, T]: from the first [M_s] on
    ended = ((input_ids == end_id) & after_start).long().cumsum(dim=1) > 0  # from its [M_e] on
    inside = after_start & ~is_start & ~ended & attention_mask.bool()  # [B, T]
    inside &= (is_start.long().cumsum(dim=1) == 1) | ~after_start  # only the first mention
    out = torch.where(has.unsqueeze(1), inside, attention_mask.bool())
    return out.to(attention_mask.dtype)
