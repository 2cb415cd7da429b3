"""Assertion flags: is a mention negated, hypothetical, historical, or about the family?

ConText (Harkema et al. 2009), the successor of NegEx (Chapman et al. 2001): a trigger
phrase of a rule (:mod:`termnorm.annotate.assertion_rules`) flags every span in its scope.
The scope runs from the trigger forward, backward or both ways, to the edge of the sentence,
to the nearest termination trigger ("but", "however", "which", "aside from", ";", ...), or
to the rule's ``max_scope`` words, whichever is nearest. A pseudo-trigger ("no increase",
"not only", "gram negative") hides the triggers inside it. A span that overlaps a trigger is
not flagged by that trigger (the mention "family history" is not family by itself). Triggers
are matched case-insensitively on word boundaries, leftmost-longest, and never across a
sentence edge; offsets are code points of the original text.

Conventions of the shipped rules:

- ``;`` is a termination trigger, so it ends a scope inside a sentence ("Patient denies
  chest pain; history of MI." flags chest pain negated and MI historical, not negated).
- "rule out X" / "r/o X" (a test still to be done) is **hypothetical**; "X was ruled out" /
  "ruled out X" is **negated**. NegEx calls "rule out" a *possible* negation; with no
  "possible" flag we fold it into hypothetical, as the work-up is in the future.
- "X is unlikely" is negated (backward), as in negspacy's clinical termset.
- Hedges ("possible", "probable", "likely", "suspected", "concern for", "cannot be ruled
  out", "X not excluded") are **hypothetical**, as the work-up has not settled them; a
  post-modifier ("X suspected", "X resolved") reaches at most four words back, and a comma
  before "suspected" keeps it from reaching back at all ("Fever, suspected pneumonia").
- "X resolved" / "resolution of X" / "X in remission" is **historical** (present before,
  not now), not negated; "not resolved" and "partially resolved" assert nothing.

Scope and limits: sentence-level pattern rules, no syntax (a trigger reaches every span in
its scope, whatever the sentence structure: "Mother reports that the patient has a fever"
is stopped only because "reports" is a termination trigger). Sentences are the room's
(:func:`termnorm.annotate.sentences.sentence_spans`) unless the caller gives its own.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from termnorm.annotate.assertion_rules import AssertionRule, AssertionRules, Category, Direction
from termnorm.annotate.sentences import sentence_spans
from termnorm.annotate.spans import Span

__all__ = ["Assertion", "assert_spans"]

_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class Assertion:
    """How the text asserts one span; all ``False`` for a plain, current, affirmed mention."""

    negated: bool = False
    hypothetical: bool = False
    historical: bool = False
    family: bool = False

    def as_dict(self) -> dict[str, bool]:
        """The four flags by name, in field order, for JSON output."""
        return asdict(self)


_FLAG = {
    Category.NEGATED_EXISTENCE: "negated",
    Category.HYPOTHETICAL: "hypothetical",
    Category.HISTORICAL: "historical",
    Category.FAMILY: "family",
}


@dataclass(frozen=True)
class _Scope:
    """A trigger at ``trigger`` and the characters ``[start, end)`` it reaches."""

    trigger: tuple[int, int]
    start: int
    end: int
    category: Category


def assert_spans(
    text: str,
    spans: Sequence[Span],
    rules: AssertionRules | None = None,
    sentences: Sequence[tuple[int, int]] | None = None,
) -> list[Assertion]:
    """The assertion of each span of ``text``, in the order of ``spans``.

    ``rules``: :meth:`AssertionRules.default` when ``None``. ``sentences``: ``(start, end)``
    code-point ranges; :func:`~termnorm.annotate.sentences.sentence_spans` when ``None``. A span belongs to the sentence
    that holds its start. ``ValueError`` for a span that is not ``text[start:end]`` or lies in
    no sentence.
    """
    rules = AssertionRules.default() if rules is None else rules
    sentences = sentence_spans(text) if sentences is None else sentences
    scopes: dict[tuple[int, int], list[_Scope]] = {}
    assertions = []
    for span in spans:
        _check_span(text, span)
        sentence = _sentence_of(span, sentences)
        if sentence not in scopes:
            scopes[sentence] = _scopes(text, *sentence, rules)
        assertions.append(_assert_one(span, scopes[sentence]))
    return assertions


def _check_span(text: str, span: Span) -> None:
    """``ValueError`` unless the span is a piece of ``text``."""
    if text[span.start : span.end] != span.text:
        raise ValueError(
            f"span {span.text!r} at {span.start}..{span.end} is not in this text (found "
            f"{text[span.start : span.end]!r}); pass the text the detector read"
        )


def _sentence_of(span: Span, sentences: Sequence[tuple[int, int]]) -> tuple[int, int]:
    """The sentence whose range holds ``span.start``."""
    for start, end in sentences:
        if start <= span.start < end:
            return (start, end)
    raise ValueError(
        f"span {span.text!r} at {span.start}..{span.end} lies in no sentence; pass sentences "
        "that cover the text (or sentences=None to split it here)"
    )


def _assert_one(span: Span, scopes: list[_Scope]) -> Assertion:
    """The flags of the scopes that reach ``span`` and whose trigger it does not overlap."""
    flags = {
        _FLAG[scope.category]
        for scope in scopes
        if span.start < scope.end
        and scope.start < span.end
        and not (span.start < scope.trigger[1] and scope.trigger[0] < span.end)
    }
    return Assertion(**dict.fromkeys(flags, True))


def _scopes(text: str, start: int, end: int, rules: AssertionRules) -> list[_Scope]:
    """The scope of every flagging trigger in the sentence ``text[start:end]``."""
    triggers = rules.finditer(text, start, end)
    stops = [(a, b) for a, b, rule in triggers if rule.category is Category.TERMINATE]
    words = [(m.start(), m.end()) for m in _WORD.finditer(text, start, end)]
    scopes = []
    for a, b, rule in triggers:
        if rule.category not in _FLAG:
            continue
        assert rule.direction is not None  # AssertionRule: flagging rules have one
        if rule.direction in (Direction.FORWARD, Direction.BIDIRECTIONAL):
            scopes.append(
                _Scope((a, b), b, _forward_end(b, end, stops, words, rule), rule.category)
            )
        if rule.direction in (Direction.BACKWARD, Direction.BIDIRECTIONAL):
            scopes.append(
                _Scope((a, b), _backward_start(a, start, stops, words, rule), a, rule.category)
            )
    return scopes


def _forward_end(
    after: int,
    sentence_end: int,
    stops: list[tuple[int, int]],
    words: list[tuple[int, int]],
    rule: AssertionRule,
) -> int:
    """Where a scope that starts at ``after`` ends: the first stop, the end of the
    ``max_scope``-th word, or the sentence end."""
    ends = [sentence_end, *(a for a, _ in stops if a >= after)]
    if rule.max_scope is not None:
        following = [w_end for w_start, w_end in words if w_start >= after]
        if len(following) > rule.max_scope:
            ends.append(following[rule.max_scope - 1])
    return min(ends)


def _backward_start(
    before: int,
    sentence_start: int,
    stops: list[tuple[int, int]],
    words: list[tuple[int, int]],
    rule: AssertionRule,
) -> int:
    """Where a scope that ends at ``before`` starts: after the last stop, at the start of
    the ``max_scope``-th word back, or at the sentence start."""
    starts = [sentence_start, *(b for _, b in stops if b <= before)]
    if rule.max_scope is not None:
        preceding = [w_start for w_start, w_end in words if w_end <= before]
        if len(preceding) > rule.max_scope:
            starts.append(preceding[-rule.max_scope])
    return max(starts)
