"""Concepts in running text: find the mentions of a document (detectors), normalize each
through the pipeline spec, and flag how the document asserts it (negated, hypothetical,
historical, family)."""

from termnorm.annotate.dictionary import DictionaryDetector
from termnorm.annotate.spans import Detector, Span

__all__ = ["Detector", "DictionaryDetector", "Span"]
