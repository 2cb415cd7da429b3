"""Concepts in running text: find the mentions of a document (detectors), normalize each
through the pipeline spec, and flag how the document asserts it (negated, hypothetical,
historical, family)."""

from termnorm.annotate.assertion import Assertion, assert_spans
from termnorm.annotate.assertion_rules import AssertionRules
from termnorm.annotate.dictionary import DictionaryDetector
from termnorm.annotate.merge import merge_spans
from termnorm.annotate.sentences import sentence_spans
from termnorm.annotate.spans import Detector, Span
from termnorm.annotate.windows import (
    DEFAULT_MAX_CHARS,
    Window,
    detect_in_windows,
    max_chars_for_tokens,
    text_windows,
)

__all__ = [
    "DEFAULT_MAX_CHARS",
    "Assertion",
    "AssertionRules",
    "Detector",
    "DictionaryDetector",
    "Span",
    "Window",
    "assert_spans",
    "detect_in_windows",
    "max_chars_for_tokens",
    "merge_spans",
    "sentence_spans",
    "text_windows",
]
