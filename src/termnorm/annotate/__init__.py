"""Concepts in running text: find the mentions of a document (detectors), normalize each
through the pipeline spec, and flag how the document asserts it (negated, hypothetical,
historical, family). ``termnorm.annotate(text, index=...)`` is the function
:func:`termnorm.api.annotate` (:func:`termnorm.annotate.texts.annotate_texts`), not this
package: ``termnorm/__init__.py`` says how the two share the name.
"""

from __future__ import annotations

from termnorm._lazy import lazy_dir, lazy_getattr

# the submodule that defines each public name: resolved on first use, so importing the
# package (the root does, to free the name ``termnorm.annotate`` for the function) loads none
_LAZY = {
    "annotation": "Annotation",
    "assertion": "Assertion assert_spans",
    "assertion_rules": "AssertionRules",
    "detectors": "DETECTORS DetectorSource build_annotator",
    "dictionary": "DictionaryDetector",
    "merge": "merge_spans",
    "pipeline": "DEFAULT_MAX_DOCUMENT_CHARS Annotator DocumentAnnotations DocumentError",
    "sentences": "sentence_spans",
    "spans": "Detector Span",
    "spec": "AnnotateSpec",
    "tagger": "SpanTagger",
    "texts": "annotate_texts",
    "windows": "DEFAULT_WINDOW_CHARS Window detect_in_windows max_chars_for_tokens text_windows",
}
_WHERE = {name: module for module, names in _LAZY.items() for name in names.split()}

__all__ = sorted(_WHERE)
__getattr__ = lazy_getattr(__name__, _WHERE)
__dir__ = lazy_dir(__all__)
