"""The span tagger's inference, and the tagger as a detector (name ``"tagger"``).

The network, its folder and the chunking are model-level (:mod:`termnorm.encoders.token_tagger`,
shared with ``training/``, whose dev scoring gets :func:`predict_spans` from the face).

:func:`predict_spans`: a text longer than ``max_length`` word pieces is cut by the tokenizer
into chunks that overlap by ``stride`` pieces; each word piece takes the prediction of the
chunk where it is farthest from a chunk edge (the most context on both sides), then the
text's tags are decoded once (:func:`termnorm.encoders.bio.decode_bio`). Chunks of all texts
are run in batches of ``batch_size``, without gradients.

:class:`SpanTagger` reads a folder ``termnorm ner train`` wrote
(:func:`termnorm.encoders.token_tagger.load_tagger`). :meth:`SpanTagger.detect` cuts the
text into sentence-bounded windows sized for the tagger's word-piece length
(:func:`~termnorm.annotate.windows.text_windows` with
:func:`~termnorm.annotate.windows.max_chars_for_tokens`), tags all distinct windows in
batches (a window still too long for the model is cut into overlapping chunks,
:func:`predict_spans`), and keeps a mention seen by two windows once by the
rule of :func:`~termnorm.annotate.windows.detect_in_windows`. Spans are code-point offsets
into the text given (``text[start:end]`` is the span, whatever its line ends, emoji, NBSP or
combining marks), an ``I`` without ``B`` starts a span, and spans are trimmed of whitespace
(:func:`~termnorm.encoders.bio.decode_bio`). Tagger spans name no concept.

Torch's intra-op threads are ``threads`` only while the tagger predicts (``None``: torch's
setting), as :class:`~termnorm.search.stages.ranker.ranker.Ranker` does. Its runtime is the
annotate spec's ``ner_runtime`` (:class:`TaggerRuntime`, ``--ner-runtime``; unset: the search's
``--runtime``, so the normalizer's encoder may run in another). With ``bf16`` it predicts under bfloat16 autocast, refused with
:class:`~termnorm.encoders.runtime.RuntimeUnavailableError` where the device has no native
bfloat16 (measured on NCBI devel abstracts, AVX512-BF16, 2 threads: 12.3 → 18.1 abstracts/s,
the same spans on 40 of 40). With ``int8`` (``onnx-int8``) it predicts with the
network's int8 ONNX graph on ``threads`` ONNX Runtime threads
(:mod:`termnorm.encoders.tagger_onnx`), on the CPU only, where an int8 layout is exact and
the graph passes its fidelity check (else refused, saying what to use).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from termnorm.annotate.spans import Span
from termnorm.annotate.windows import detect_in_windows, max_chars_for_tokens, text_windows
from termnorm.encoders.bio import decode_bio

if TYPE_CHECKING:
    import torch

    from termnorm.encoders.forward import OnnxForward
    from termnorm.encoders.token_tagger import TokenTagger, TrainedTagger

__all__ = ["SpanTagger", "TaggerRuntime", "predict_spans"]

DEFAULT_BATCH_SIZE = 16


class TaggerRuntime(str, Enum):
    """The engines the span tagger runs in: its network in PyTorch (fp32), under bfloat16
    autocast, or as its int8 ONNX graph (module doc)."""

    TORCH = "torch"
    BF16 = "bf16"
    ONNX_INT8 = "onnx-int8"


class SpanTagger:
    """Finds mentions with a trained BIO tagger (module doc); ``name`` is ``"tagger"``."""

    name = "tagger"

    def __init__(
        self,
        tagger: TrainedTagger,
        threads: int | None = None,
        batch_size: int = DEFAULT_BATCH_SIZE,
        bf16: bool = False,
        int8: bool = False,
    ) -> None:
        from termnorm.encoders.forward import bf16_supported, check_threads
        from termnorm.encoders.runtime import RuntimeUnavailableError

        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        device = next(tagger.model.parameters()).device
        if bf16 and not bf16_supported(device):
            raise RuntimeUnavailableError(
                f"bf16: this {device.type.upper()} has no native bfloat16, so the span tagger "
                "cannot run in it; use --ner-runtime torch"
            )
        if int8 and device.type != "cpu":
            raise RuntimeUnavailableError(
                "onnx-int8 runs the span tagger on the CPU only; use --device cpu, "
                "or --ner-runtime torch on the GPU"
            )
        self.tagger = tagger
        self.threads = check_threads(threads)
        self.batch_size = batch_size
        self.bf16 = bf16
        self.device_type = device.type
        self.max_chars = max_chars_for_tokens(tagger.max_length)
        self.int8: OnnxForward | None = _int8_forward(tagger, self.threads) if int8 else None

    @classmethod
    def load(
        cls,
        path: str | Path,
        device: str | torch.device | None = None,
        threads: int | None = None,
        batch_size: int = DEFAULT_BATCH_SIZE,
        bf16: bool = False,
        int8: bool = False,
    ) -> SpanTagger:
        """The tagger of a ``termnorm ner train`` folder; refused with
        :class:`~termnorm.errors.ArtifactMismatchError` when it is not one."""
        from termnorm.encoders.token_tagger import load_tagger

        return cls(load_tagger(path, device), threads, batch_size, bf16, int8)

    @property
    def path(self) -> Path:
        """The tagger's folder."""
        return self.tagger.path

    def detect(self, text: str) -> list[Span]:
        """Every mention the tagger finds in ``text``, sorted by ``(start, end)``."""
        windows = text_windows(text, self.max_chars)
        distinct = list(dict.fromkeys(text[w.start : w.end] for w in windows))
        found = dict(zip(distinct, self.predict(distinct), strict=True))
        return detect_in_windows(text, _Found(self.name, found), max_chars=self.max_chars)

    def predict(self, texts: list[str]) -> list[list[Span]]:
        """The spans of each text, all texts tagged in batches (no windows: a text longer
        than the model reads is cut into overlapping chunks)."""
        from termnorm.encoders.forward import torch_threads

        t = self.tagger
        model = t.model if self.int8 is None else self.int8
        with torch_threads(self.threads), _autocast(self.device_type, self.bf16):
            offsets = predict_spans(
                model, t.tokenizer, texts, t.max_length, t.stride, self.batch_size
            )
        return [
            [Span(start, end, text[start:end], self.name) for start, end in spans]
            for text, spans in zip(texts, offsets, strict=True)
        ]


def predict_spans(
    model: TokenTagger | OnnxForward,
    tokenizer: Any,
    texts: Sequence[str],
    max_length: int,
    stride: int,
    batch_size: int = DEFAULT_BATCH_SIZE,
) -> list[list[tuple[int, int]]]:
    """The predicted mention spans of each text (code-point offsets, sorted; module doc)."""
    from termnorm.encoders.token_tagger import encode_chunks

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
    model: TokenTagger | OnnxForward, tokenizer: Any, ids: list[list[int]], batch_size: int
) -> list[list[int]]:
    """The argmax tag of every word piece of every chunk: by the network (in eval mode
    meanwhile, without gradients) or by its ONNX graph."""
    import torch

    pad = int(tokenizer.pad_token_id or 0)
    if not isinstance(model, torch.nn.Module):
        return _tags(
            lambda i, m: model({"input_ids": i, "attention_mask": m}), pad, ids, batch_size
        )
    device = next(model.parameters()).device

    def logits(input_ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        out = model(torch.from_numpy(input_ids).to(device), torch.from_numpy(mask).to(device))
        return out.float().cpu().numpy()  # type: ignore[no-any-return]

    training = model.training
    model.eval()
    try:
        with torch.inference_mode():
            return _tags(logits, pad, ids, batch_size)
    finally:
        model.train(training)


def _tags(
    logits: Callable[[np.ndarray, np.ndarray], np.ndarray],
    pad: int,
    ids: list[list[int]],
    batch_size: int,
) -> list[list[int]]:
    """The argmax of ``logits`` (``input_ids, attention_mask -> [B, T, labels]``) for every
    word piece of ``ids``, in padded batches of ``batch_size`` chunks."""
    tags: list[list[int]] = []
    for first in range(0, len(ids), batch_size):
        batch = ids[first : first + batch_size]
        width = max(len(row) for row in batch)
        input_ids = np.full((len(batch), width), pad, dtype=np.int64)
        mask = np.zeros((len(batch), width), dtype=np.int64)
        for i, row in enumerate(batch):
            input_ids[i, : len(row)] = row
            mask[i, : len(row)] = 1
        best = logits(input_ids, mask).argmax(-1).tolist()
        tags.extend(best[i][: len(row)] for i, row in enumerate(batch))
    return tags


def _int8_forward(tagger: TrainedTagger, threads: int | None) -> OnnxForward:
    """The session of ``tagger``'s int8 graph, checked against the fp32 network."""
    from termnorm.encoders.forward import OnnxForward
    from termnorm.encoders.tagger_onnx import check_tagger_fidelity, tagger_graph

    forward = OnnxForward(tagger_graph(tagger), threads)
    check_tagger_fidelity(tagger, forward)
    return forward


def _autocast(device_type: str, bf16: bool) -> contextlib.AbstractContextManager[object]:
    """bfloat16 autocast on ``device_type`` when ``bf16``, else nothing."""
    import torch

    if not bf16:
        return contextlib.nullcontext()
    return torch.autocast(device_type, dtype=torch.bfloat16)


class _Found:
    """A detector answering from spans found beforehand, by window text."""

    def __init__(self, name: str, found: dict[str, list[Span]]) -> None:
        self.name = name
        self.found = found

    def detect(self, text: str) -> list[Span]:
        return self.found[text]
