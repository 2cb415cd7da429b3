"""Which detectors find the mentions: the dictionary, the trained span tagger, or both.

:func:`select_detectors` is the one rule every face follows (``--ner DIR``,
``--detectors dictionary|tagger|both``; ``ner=``, ``detectors=`` in Python): without a
choice, the tagger when a tagger folder is given (alone: on NCBI-disease devel the union
scored below the tagger at every level, docs/results/annotation.md) and the dictionary otherwise; ``tagger`` or
``both`` without a tagger folder is refused. Loaded taggers are kept per folder (until its
card changes) and thread setting, so repeated calls do not reload them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING

from termnorm.annotate.spans import Detector
from termnorm.annotate.tagger import SpanTagger

if TYPE_CHECKING:
    from termnorm.search.spec import PipelineSpec

__all__ = ["DetectorChoice", "load_span_tagger", "resolve_choice", "select_detectors"]

_lock = threading.Lock()
_taggers: dict[tuple[str, int, int | None, bool], SpanTagger] = {}


class DetectorChoice(str, Enum):
    """The detectors to run (``--detectors``)."""

    DICTIONARY = "dictionary"
    TAGGER = "tagger"
    BOTH = "both"


def resolve_choice(choice: DetectorChoice | str | None, ner: str | Path | None) -> DetectorChoice:
    """``choice`` checked against ``ner`` (module doc for the default and the refusal)."""
    if choice is None:
        return DetectorChoice.TAGGER if ner is not None else DetectorChoice.DICTIONARY
    try:
        chosen = DetectorChoice(choice)
    except ValueError:
        known = "|".join(c.value for c in DetectorChoice)
        raise ValueError(f"unknown detectors {choice!r}; choose {known}") from None
    if chosen is not DetectorChoice.DICTIONARY and ner is None:
        raise ValueError(
            f"detectors {chosen.value!r} need a trained span tagger: give its folder with "
            "--ner DIR (ner=DIR), trained by 'termnorm ner train'"
        )
    return chosen


def select_detectors(
    choice: DetectorChoice | str | None,
    ner: str | Path | None,
    spec: PipelineSpec,
    dictionary: Callable[[], Detector] | None = None,
) -> list[Detector]:
    """The detectors of ``choice`` (:func:`resolve_choice`) for ``spec``, the dictionary
    first: ``dictionary`` builds it when it is chosen (default
    :func:`~termnorm.annotate.pipeline.default_detector` of ``spec``); the tagger runs with
    the spec's ``threads`` and, under ``--runtime bf16``, in bfloat16."""
    from termnorm.encoders.runtime import Runtime

    chosen = resolve_choice(choice, ner)
    detectors: list[Detector] = []
    if chosen is not DetectorChoice.TAGGER:
        if dictionary is None:
            from termnorm.annotate.pipeline import default_detector

            detectors.append(default_detector(spec))
        else:
            detectors.append(dictionary())
    if chosen is not DetectorChoice.DICTIONARY:
        assert ner is not None  # resolve_choice refuses it
        bf16 = spec.runtime is Runtime.BF16
        detectors.append(load_span_tagger(ner, spec.threads, bf16))
    return detectors


def load_span_tagger(
    path: str | Path, threads: int | None = None, bf16: bool = False
) -> SpanTagger:
    """The :class:`SpanTagger` of a tagger folder, loaded once per folder content (the
    card's modification time), thread setting and ``bf16``."""
    from termnorm.training.tagger_folder import CARD_NAME

    folder = Path(path).resolve()
    card = folder / CARD_NAME
    stamp = card.stat().st_mtime_ns if card.is_file() else -1
    key = (str(folder), stamp, threads, bf16)
    with _lock:
        if key not in _taggers:
            _taggers[key] = SpanTagger.load(folder, threads=threads, bf16=bf16)
        return _taggers[key]
