"""Concepts in running text: find the mentions of a document (detectors), normalize each
through the pipeline spec, and flag how the document asserts it (negated, hypothetical,
historical, family)."""

from termnorm.annotate.assertion import Assertion, assert_spans
from termnorm.annotate.assertion_rules import AssertionRules
from termnorm.annotate.spans import Detector, Span

__all__ = ["Assertion", "AssertionRules", "Detector", "Span", "assert_spans"]
