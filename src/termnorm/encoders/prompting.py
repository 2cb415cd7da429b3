"""A model folder's default prompt (multilingual-e5's ``"query: "``) before every text a
tokenizer reads, for the code that calls the tokenizer itself rather than through
:meth:`~termnorm.encoders.TermEncoder.tokenize` (KGE injection, the cross-encoder ranker).

:func:`tokenize_prompted` tokenizes ``prompt + text`` (each text of a pair too) and maps the
character offsets back to the text the caller passed: a token inside the prompt gets
``(0, 0)``, as the special tokens do, and counts as special in ``special_tokens_mask``
(never a mention, never masked); a token after it is shifted by ``len(prompt)``. A token that
starts in the prompt and ends in the text (SentencePiece's ``▁`` carries the prompt's last
space into the first word) starts at 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["prompted", "text_offsets", "tokenize_prompted"]


def prompted(prompt: str, texts: Sequence[str]) -> list[str]:
    """``texts`` as the model reads them: each after ``prompt`` (``""``: unchanged)."""
    return [prompt + t for t in texts] if prompt else list(texts)


def text_offsets(
    offsets: Sequence[tuple[int, int]], sequence_ids: Sequence[int | None], prompt: str
) -> list[tuple[int, int]]:
    """Offsets into ``prompt + text`` → offsets into ``text`` (module doc); the tokens of no
    sequence (``None``: special tokens) keep theirs."""
    cut = len(prompt)
    out: list[tuple[int, int]] = []
    for (start, end), seq in zip(offsets, sequence_ids, strict=True):
        if seq is None or not cut:
            out.append((int(start), int(end)))
        elif end <= cut:  # inside the prompt
            out.append((0, 0))
        else:
            out.append((max(int(start) - cut, 0), int(end) - cut))
    return out


def tokenize_prompted(
    tokenizer: Any,
    texts: Sequence[str],
    prompt: str,
    pairs: Sequence[str] | None = None,
    **kwargs: Any,
) -> Any:
    """``tokenizer(prompt + texts[, prompt + pairs], **kwargs)`` (a fast tokenizer's
    ``BatchEncoding``, unpadded lists), with ``offset_mapping`` and ``special_tokens_mask``,
    when asked for, relative to the texts as given (module doc).

    Raises:
        ValueError: a prompt with a slow tokenizer (no offsets), or with
            ``return_overflowing_tokens`` (the prompt would open the first chunk only).
    """
    if prompt and not getattr(tokenizer, "is_fast", False):
        raise ValueError("a prompt's tokens are found by offsets: a fast tokenizer is needed")
    if prompt and kwargs.get("return_overflowing_tokens"):
        raise ValueError(
            "a prompt opens the first chunk of an overflowing text only: tokenize chunks "
            "without the prompt, or the prompted texts unchunked"
        )
    second = prompted(prompt, pairs) if pairs is not None else None
    encoded = tokenizer(prompted(prompt, texts), second, **kwargs)
    if not prompt:
        return encoded
    offsets, special = [], []
    for i, encoding in enumerate(encoded.encodings):  # offsets into the prompted texts
        sequences = encoding.sequence_ids
        offsets.append(text_offsets(encoding.offsets, sequences, prompt))
        if "special_tokens_mask" in encoded:
            inside = [
                seq is not None and end <= len(prompt)
                for (_, end), seq in zip(encoding.offsets, sequences, strict=True)
            ]
            marks = encoded["special_tokens_mask"][i]
            special.append([int(bool(m) or p) for m, p in zip(marks, inside, strict=True)])
    if "offset_mapping" in encoded:
        encoded["offset_mapping"] = offsets
    if "special_tokens_mask" in encoded:
        encoded["special_tokens_mask"] = special
    return encoded
