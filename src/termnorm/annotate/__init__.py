"""Concepts in running text: find the mentions of a document (detectors), normalize each
through the pipeline spec, and flag how the document asserts it (negated, hypothetical,
historical, family). ``termnorm.annotate(text, index=...)`` is the function
:func:`termnorm.api.annotate` (:func:`termnorm.annotate.texts.annotate_texts`), not this
package: ``termnorm/__init__.py`` says how the two share the name.
"""

from termnorm.annotate.annotation import Annotation
from termnorm.annotate.assertion import Assertion, assert_spans
from termnorm.annotate.assertion_rules import AssertionRules
from termnorm.annotate.detectors import DETECTORS, DetectorSource, build_annotator
from termnorm.annotate.dictionary import DictionaryDetector
from termnorm.annotate.merge import merge_spans
from termnorm.annotate.pipeline import (
    DEFAULT_MAX_DOCUMENT_CHARS,
    Annotator,
    DocumentAnnotations,
    DocumentError,
)
from termnorm.annotate.sentences import sentence_spans
from termnorm.annotate.spans import Detector, Span
from termnorm.annotate.spec import AnnotateSpec
from termnorm.annotate.tagger import SpanTagger
from termnorm.annotate.texts import annotate_texts
from termnorm.annotate.windows import (
    DEFAULT_WINDOW_CHARS,
    Window,
    detect_in_windows,
    max_chars_for_tokens,
    text_windows,
)

__all__ = [
    "DEFAULT_MAX_DOCUMENT_CHARS",
    "DEFAULT_WINDOW_CHARS",
    "DETECTORS",
    "AnnotateSpec",
    "Annotation",
    "Annotator",
    "Assertion",
    "AssertionRules",
    "Detector",
    "DetectorSource",
    "DictionaryDetector",
    "DocumentAnnotations",
    "DocumentError",
    "Span",
    "SpanTagger",
    "Window",
    "annotate_texts",
    "assert_spans",
    "build_annotator",
    "detect_in_windows",
    "max_chars_for_tokens",
    "merge_spans",
    "sentence_spans",
    "text_windows",
]
