"""The detectors, by name, and the one way every face assembles an annotator.

:data:`DETECTORS` is the registry of detectors (``--detectors``; entry-point group
``termnorm.detectors``): an entry's target is a factory ``(spec, source) -> Detector`` of the
:class:`~termnorm.annotate.spec.AnnotateSpec` and the :class:`DetectorSource` (the loaded
index and extra synonym pairs a face already holds). A new detector is one module plus one
``DETECTORS.register(...)`` line. :func:`build_annotator` is what the CLI, the library, batch
files, Ray, the service and the spaCy component call. Loaded taggers are kept per folder
(until its card changes) and thread setting, so repeated calls do not reload them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from termnorm.annotate.spans import Detector
from termnorm.registry import Registry

if TYPE_CHECKING:
    from termnorm.annotate.assertion_rules import AssertionRules
    from termnorm.annotate.pipeline import Annotator
    from termnorm.annotate.spec import AnnotateSpec
    from termnorm.annotate.tagger import SpanTagger
    from termnorm.index import TermIndex
    from termnorm.search.candidate import RowMatcher
    from termnorm.search.spec import PipelineSpec

__all__ = [
    "DETECTORS",
    "DetectorFactory",
    "DetectorSource",
    "build_annotator",
    "dictionary_of_spec",
    "load_span_tagger",
    "tagger_of_spec",
]

_lock = threading.Lock()
_taggers: dict[tuple[str, int, int | None, bool, bool], SpanTagger] = {}


@dataclass(frozen=True)
class DetectorSource:
    """What a face already holds for its detectors: the loaded ``index`` (``None``: the
    spec's, loaded when needed) and ``(concept_id, text)`` ``pairs`` the dictionary knows
    besides the spec's synonym files."""

    index: TermIndex | None = None
    pairs: tuple[tuple[str, str], ...] = ()


DetectorFactory = Callable[["AnnotateSpec", DetectorSource], Detector]
"""What a detector entry names: the detector of a spec and a source."""

DETECTORS: Registry[DetectorFactory] = Registry("detector", "--detectors", "termnorm.detectors")
"""The detectors by name (module doc)."""


def build_annotator(
    spec: AnnotateSpec,
    source: DetectorSource | None = None,
    *,
    build_search: Callable[[PipelineSpec], RowMatcher] | None = None,
    rules: AssertionRules | None = None,
    detectors: Sequence[Detector] | None = None,
) -> Annotator:
    """The :class:`~termnorm.annotate.pipeline.Annotator` of ``spec``: its detectors (built
    from :data:`DETECTORS` on the first document, in the order named), the ``rules`` file
    added to each language's shipped rules (``rules``: these rules for every document
    instead), windows, ``k`` and document limit. Its search is ``spec.search`` as
    ``spec.findings`` needs it over the source's index (``Annotator.search``: HPO's diseases
    left out under ``phenotypes``), built on the first document by ``build_search`` (a face's
    own space or synonym notices; default ``build``); ``detectors``: detector objects to
    use instead of the spec's names.

    Raises:
        UnknownNameError: a detector registered no more (an entry point uninstalled).
    """
    from termnorm.annotate.assertion_rules import AssertionRules
    from termnorm.annotate.pipeline import Annotator

    given = source or DetectorSource()
    factories = [DETECTORS.resolve(name).load() for name in spec.detectors]
    made = (
        list(detectors)
        if detectors is not None
        else lambda: [make(spec, given) for make in factories]
    )
    extra = None if spec.rules is None else AssertionRules.from_file(spec.rules)
    return Annotator(
        spec.search,
        made,
        rules,
        spec.k,
        spec.window_chars,
        max_document_chars=spec.max_document_chars,
        build_search=build_search,
        index=given.index,
        language=spec.language,
        extra_rules=extra,
        findings=spec.findings,
        short_forms=spec.short_forms,
        coordination=spec.coordination,
    )


def dictionary_of_spec(spec: AnnotateSpec, source: DetectorSource) -> Detector:
    """The dictionary detector (``"dictionary"``): the index's terms, the spec's synonym
    files and the source's pairs, of the concepts the spec's filter lets through as its
    findings need it (:func:`~termnorm.annotate.modifiers.findings_search`: no disease name
    of HPO under ``phenotypes``; :func:`~termnorm.annotate.pipeline.dictionary_detector`),
    with the spec's matching rules (``variants``, ``paraphrases``); with ``spec.spelling``, it
    also reads misspellings of their words (:mod:`termnorm.annotate.fuzzy`), with
    ``spec.shorthand_spans`` the shorthand whose sense is one of its names
    (:mod:`termnorm.annotate.shorthand_spans`; the search's list, none under
    ``shorthand="none"``)."""
    from termnorm.annotate.modifiers import findings_search
    from termnorm.annotate.pipeline import dictionary_detector, spec_filter
    from termnorm.annotate.variants import paraphrase_rules
    from termnorm.search.build import resolve_index
    from termnorm.search.stages.shorthand import SHORTHAND_OFF

    search = spec.search
    index = source.index if source.index is not None else resolve_index(search.index)
    wanted = spec_filter(findings_search(search, spec.findings, index))
    detector = dictionary_detector(index, search.synonyms, source.pairs, concept_filter=wanted)
    rules = paraphrase_rules(spec.paraphrases)
    detector = detector.with_rules(variants=spec.variants, paraphrases=rules)
    if spec.spelling:
        from termnorm.annotate.fuzzy import reading_misspellings

        names = [*index.terms["term"], *(t for _, t in source.pairs)]
        detector = reading_misspellings(detector, names)
    if not spec.shorthand_spans or search.shorthand == SHORTHAND_OFF:
        return detector
    from termnorm.annotate.shorthand_spans import ShorthandSpans
    from termnorm.mentions.shorthand import shorthand_list

    return ShorthandSpans(detector, shorthand_list(search.shorthand))


def tagger_of_spec(spec: AnnotateSpec, source: DetectorSource) -> SpanTagger:
    """The span tagger of ``spec.ner`` (``"tagger"``), with the search's ``threads``, in its
    runtime: ``spec.ner_runtime``, else the search's (``bf16`` in bfloat16, ``onnx-int8`` its
    int8 graph, any other in torch fp32); the normalizer's encoder keeps the search's."""
    assert spec.ner is not None  # AnnotateSpec refuses the tagger without it
    runtime = (spec.ner_runtime or spec.search.runtime).value
    return load_span_tagger(
        spec.ner, spec.search.threads, runtime == "bf16", runtime == "onnx-int8"
    )


DETECTORS.register(
    "dictionary", dictionary_of_spec, help="the index's terms and the domain synonyms"
)
DETECTORS.register("tagger", tagger_of_spec, help="a trained span tagger (--ner DIR)")


def load_span_tagger(
    path: str | Path, threads: int | None = None, bf16: bool = False, int8: bool = False
) -> SpanTagger:
    """The :class:`SpanTagger` of a tagger folder, loaded once per folder content (the
    card's modification time), thread setting and runtime (``bf16``, ``int8``)."""
    from termnorm.annotate.tagger import SpanTagger
    from termnorm.encoders.token_tagger import CARD_NAME

    folder = Path(path).resolve()
    card = folder / CARD_NAME
    stamp = card.stat().st_mtime_ns if card.is_file() else -1
    key = (str(folder), stamp, threads, bf16, int8)
    with _lock:
        if key not in _taggers:
            _taggers[key] = SpanTagger.load(folder, threads=threads, bf16=bf16, int8=int8)
        return _taggers[key]
