"""The trained span tagger as a :class:`~termnorm.annotate.spans.Detector` (name ``"tagger"``).

:class:`SpanTagger` reads a folder ``termnorm ner train`` wrote
(:func:`termnorm.training.tagger_folder.load_tagger`). :meth:`SpanTagger.detect` cuts the
text into sentence-bounded windows sized for the tagger's word-piece length
(:func:`~termnorm.annotate.windows.text_windows` with
:func:`~termnorm.annotate.windows.max_chars_for_tokens`), tags all distinct windows in
batches (a window still too long for the model is cut into overlapping chunks,
:mod:`termnorm.training.tagger_predict`), and keeps a mention seen by two windows once by the
rule of :func:`~termnorm.annotate.windows.detect_in_windows`. Spans are code-point offsets
into the text given (``text[start:end]`` is the span, whatever its line ends, emoji, NBSP or
combining marks), an ``I`` without ``B`` starts a span, and spans are trimmed of whitespace
(:func:`termnorm.training.tagger_bio.decode_bio`). Tagger spans name no concept.

Torch's intra-op threads are ``threads`` only while the tagger predicts (``None``: torch's
setting), as :class:`~termnorm.search.stages.ranker.ranker.Ranker` does.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from termnorm.annotate.spans import Span
from termnorm.annotate.windows import detect_in_windows, max_chars_for_tokens, text_windows

if TYPE_CHECKING:
    import torch

    from termnorm.training.tagger_folder import TrainedTagger

__all__ = ["SpanTagger"]

DEFAULT_BATCH_SIZE = 16


class SpanTagger:
    """Finds mentions with a trained BIO tagger (module doc); ``name`` is ``"tagger"``."""

    name = "tagger"

    def __init__(
        self,
        tagger: TrainedTagger,
        threads: int | None = None,
        batch_size: int = DEFAULT_BATCH_SIZE,
    ) -> None:
        from termnorm.encoders.forward import check_threads

        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        self.tagger = tagger
        self.threads = check_threads(threads)
        self.batch_size = batch_size
        self.max_chars = max_chars_for_tokens(tagger.max_length)

    @classmethod
    def load(
        cls,
        path: str | Path,
        device: str | torch.device | None = None,
        threads: int | None = None,
        batch_size: int = DEFAULT_BATCH_SIZE,
    ) -> SpanTagger:
        """The tagger of a ``termnorm ner train`` folder; refused with
        :class:`~termnorm.errors.ArtifactMismatchError` when it is not one."""
        from termnorm.training.tagger_folder import load_tagger

        return cls(load_tagger(path, device), threads, batch_size)

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
        from termnorm.training.tagger_predict import predict_spans

        t = self.tagger
        with torch_threads(self.threads):
            offsets = predict_spans(
                t.model, t.tokenizer, texts, t.max_length, t.stride, self.batch_size
            )
        return [
            [Span(start, end, text[start:end], self.name) for start, end in spans]
            for text, spans in zip(texts, offsets, strict=True)
        ]


class _Found:
    """A detector answering from spans found beforehand, by window text."""

    def __init__(self, name: str, found: dict[str, list[Span]]) -> None:
        self.name = name
        self.found = found

    def detect(self, text: str) -> list[Span]:
        return self.found[text]
