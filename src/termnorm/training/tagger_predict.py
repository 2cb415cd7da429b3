"""Word-piece BIO predictions of a :class:`TokenTagger` over texts of any length, as spans.

A text longer than ``max_length`` word pieces is cut by the tokenizer into chunks that
overlap by ``stride`` pieces; each word piece takes the prediction of the chunk where it is
farthest from a chunk edge (the most context on both sides), then the text's tags are
decoded once (:func:`termnorm.training.tagger_bio.decode_bio`). Chunks of all texts are run
in batches of ``batch_size``, without gradients.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from termnorm.training.tagger_bio import decode_bio
from termnorm.training.tagger_model import TokenTagger

__all__ = ["encode_chunks", "predict_spans"]


def encode_chunks(tokenizer: Any, texts: Sequence[str], max_length: int, stride: int) -> Any:
    """The tokenizer's chunks of ``texts`` (``BatchEncoding`` with ``input_ids``,
    ``attention_mask``, ``offset_mapping`` and ``overflow_to_sample_mapping``), unpadded."""
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


def predict_spans(
    model: TokenTagger,
    tokenizer: Any,
    texts: Sequence[str],
    max_length: int,
    stride: int,
    batch_size: int = 16,
) -> list[list[tuple[int, int]]]:
    """The predicted mention spans of each text (code-point offsets, sorted)."""
    if not texts:
        return []
    enc = encode_chunks(tokenizer, texts, max_length, stride)
    ids: list[list[int]] = enc["input_ids"]
    tags = _chunk_tags(model, tokenizer, ids, batch_size)
    best: list[dict[tuple[int, int], tuple[int, int]]] = [{} for _ in texts]
    for chunk, sample in enumerate(enc["overflow_to_sample_mapping"]):
        length = len(ids[chunk])
        for position, offset in enumerate(enc["offset_mapping"][chunk]):
            offset = (int(offset[0]), int(offset[1]))
            if offset[0] == offset[1]:
                continue
            margin = min(position, length - 1 - position)
            known = best[sample].get(offset)
            if known is None or margin > known[0]:
                best[sample][offset] = (margin, tags[chunk][position])
    out = []
    for text, pieces in zip(texts, best, strict=True):
        offsets = sorted(pieces)
        out.append(decode_bio([pieces[o][1] for o in offsets], offsets, text))
    return out


def _chunk_tags(
    model: TokenTagger, tokenizer: Any, ids: list[list[int]], batch_size: int
) -> list[list[int]]:
    """The argmax tag of every word piece of every chunk (model in eval mode meanwhile)."""
    device = next(model.parameters()).device
    pad = int(tokenizer.pad_token_id or 0)
    training = model.training
    model.eval()
    tags: list[list[int]] = []
    try:
        with torch.inference_mode():
            for first in range(0, len(ids), batch_size):
                batch = ids[first : first + batch_size]
                width = max(len(row) for row in batch)
                input_ids = torch.full((len(batch), width), pad, dtype=torch.long)
                mask = torch.zeros((len(batch), width), dtype=torch.long)
                for i, row in enumerate(batch):
                    input_ids[i, : len(row)] = torch.tensor(row)
                    mask[i, : len(row)] = 1
                logits = model(input_ids.to(device), mask.to(device))
                best = logits.argmax(-1).cpu().tolist()
                tags.extend(best[i][: len(row)] for i, row in enumerate(batch))
    finally:
        model.train(training)
    return tags
