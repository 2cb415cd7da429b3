"""The short forms a document defines, found wherever the document uses them.

A document names a finding once in full and then by its short form: "myotonic dystrophy
(DM) ... DM patients". The dictionary finds the long form; a short form is rarely a name of
the terminology, and when it is ("DM"), it names other concepts too. :func:`short_form_spans`
reads the document's pairs with Ab3P (:func:`~termnorm.mentions.abbreviations.detect_abbreviations`)
and, for a pair whose long form is itself a found mention (its text, case aside), gives a
span for every whole-token occurrence of the short form (the one in the definition's
parentheses too), with that mention's concepts and detector. The normalizer then expands the
short form through the same pairs (:mod:`termnorm.search.context`), so the span is
normalized as its long form.

A short form whose long form is not a mention is left alone: Ab3P pairs gene and protein
names too ("ataxia-telangiectasia mutated (ATM)" is not the disease). A document whose
abbreviations Ab3P cannot read gets no short-form span; the normalizer reports it in the
document's warning.
"""

from __future__ import annotations

from collections.abc import Sequence

from termnorm.annotate.spans import Span
from termnorm.errors import AbbreviationError
from termnorm.mentions.abbreviations import (
    detect_abbreviations,
    short_form_map,
    short_form_pattern,
)

__all__ = ["short_form_spans"]


def short_form_spans(text: str, spans: Sequence[Span]) -> list[Span]:
    """A span for each occurrence in ``text`` of a short form whose long form is the text of
    one of ``spans`` (module doc), sorted; spans already in ``spans`` are not repeated."""
    by_text = {span.text.casefold(): span for span in spans}
    try:
        pairs = short_form_map(detect_abbreviations(text))
    except AbbreviationError:
        return []  # the normalizer reports the document's unread abbreviations
    named = {sf: by_text[lf.casefold()] for sf, lf in pairs.items() if lf.casefold() in by_text}
    pattern = short_form_pattern(named)
    if pattern is None:
        return []
    taken = {(span.start, span.end) for span in spans}
    return [
        Span(m.start(), m.end(), m.group(), named[m.group()].detector, named[m.group()].concept_ids)
        for m in pattern.finditer(text)
        if (m.start(), m.end()) not in taken
    ]
