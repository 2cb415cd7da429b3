"""Tokens with exact offsets, and the key each token is matched by.

:func:`tokenize` cuts a text into words and single punctuation characters, each with its
code-point ``start`` and ``end`` in the ORIGINAL text. A word is a run of letters and digits
with the combining marks that follow it, a possessive ``'s``, and a bound prefix joined by a
hyphen ("pre-", "non-", "hyper-"…: :data:`PREFIXES`, a regex alternation). The text is never
rewritten, so ``text[t.start:t.end] == t.text`` for CRLF, emoji, combining marks and NBSP
alike (whitespace of any kind separates tokens and belongs to none).

:func:`token_key` maps a word to the key that name and text tokens are compared by:

1. NFKC, then case folding (``"ﬁ"`` -> ``"fi"``, ``"ß"`` -> ``"ss"``), a possessive ``'s``
   dropped ("Sjögren's syndrome" is "Sjögren syndrome"), a prefix's hyphen dropped
   ("pre-auricular" is "preauricular");
2. accents stripped, always (``"Sjögren"`` and ``"Sjogren"`` are one key);
3. a light English suffix stemmer, the same function on both sides (so it only has to fold
   the variants of one word together, never to produce a dictionary word). It touches only
   alphabetic tokens of 4 or more letters, so acronyms and codes ("CNS", "MS", "T2") stay
   as they are; the rules, first match wins:

   * ``-ies`` -> ``-y`` (anomalies -> anomaly), ``-sses`` -> ``-ss``;
   * ``-s`` dropped, except after ``s``, ``u``, ``i`` (stenosis, uterus, fetus stay; ``-ss``
     too); after ``a`` it goes (hamartomas, dysplasias: plurals in ``-as`` are common in
     medicine; "pancreas" becomes "pancrea" on both sides, which meets no other word);
   * ``-ing`` / ``-ed`` dropped where the rest holds a vowel (dilated, dilating -> dilat),
     one of a doubled final consonant undone (stopped -> stop);
   * then an adjective meets the noun it is made from (:data:`DERIVATIONS`, first match wins),
     where English makes the pair by a fixed suffix: hypoplastic / hypoplasia (``-astic`` ->
     ``-asia``), sclerotic / sclerosis (``-otic`` -> ``-osis``), anemic / anemia (``-emic`` ->
     ``-emia``), atrophic / atrophy (``-trophic`` -> ``-trophy``), and fibular / fibula, tibial /
     tibia, vertebral / vertebra (an ``a``-noun's adjective in ``-ar`` / ``-al``: its last
     letter dropped);
   * then a final ``-e`` dropped (dilate -> dilat, disease -> diseas), so a verb's forms and
     a plural meet at one key.

   These keys only say *where* a name is written; the normalizer, not the key, decides the
   concept of a span (:mod:`termnorm.annotate.pipeline`), so folding an adjective onto its
   noun ("hypoplasia of the fibula" is found where HPO says "Fibular hypoplasia") costs no
   concept accuracy. Other derivations are not folded: ``-al`` after a consonant, ``-ic`` ->
   ``-y`` and ``-ity`` have no fixed pair ("renal" is not "ren"), and ``-ence`` / ``-ency``
   -> ``-ent`` turns descriptions that are not conditions into names ("APRT-deficient"
   cells meet "APRT deficiency", "recurrent" meets "Recurrence"; on NCBI-disease devel it
   added 14 false spans and 2 true ones). Pairs that hold only for some words (``-ic`` ->
   ``-y``, Latin plurals) are the dictionary's word variants instead, each taken only where
   the other word is a name's (:mod:`termnorm.annotate.variants`).

**Acronyms** (:func:`acronym_key`) keep their case: a name's word written as an acronym ("MI",
"WAS", "RB1") matches only a text word written the same way, so the common words that short
forms spell ("was", "all", "can") are not names. A name written wholly in capitals (OMIM's
"ATRIOVENTRICULAR SEPTAL DEFECT") says nothing about which of its words are acronyms, so its
words are keyed as usual unless it is one word.

:data:`STOP_WORDS` are function words ignored inside a name and inside a text window. ``and``,
``or``, ``no``, ``not``, ``without`` are NOT stop words: they change what a name means
("cleft lip and palate" is not "cleft lip"; a window over "A and B" must not match a name
"A B"). ``a`` is not one either: single letters carry meaning in names ("vitamin A",
"hepatitis A").
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

__all__ = [
    "BARRIERS",
    "DERIVATIONS",
    "PREFIXES",
    "STOP_WORDS",
    "Token",
    "acronym_key",
    "content_key",
    "stem",
    "token_key",
    "tokenize",
]

# letters/digits (``[^\W_]``) and the combining marks that follow them, or one punctuation
# character; the marks are the Unicode "Combining Diacritical Marks" blocks
_MARKS = "\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f"
# bound prefixes written with or without a hyphen ("pre-auricular" / "preauricular"): with
# one, the prefix, the hyphen and the word are one token whose key drops the hyphen
PREFIXES = (
    "anti|bi|extra|hyper|hypo|infra|inter|intra|macro|micro|mono|multi|non|para|peri|poly|"
    "post|pre|pseudo|semi|sub|supra|trans|tri|ultra"
)
_WORD = rf"[^\W_](?:[^\W_]|[{_MARKS}])*"
_TOKEN = re.compile(rf"(?:(?i:{PREFIXES})-(?=[^\W_]))?{_WORD}(?:['\u2019][sS](?![^\W_]))?|\S")
_POSSESSIVE = ("'s", "\u2019s")
# a match never crosses these: the ends of sentences and clauses
BARRIERS = frozenset(".;!?")
STOP_WORDS = frozenset(
    {"an", "the", "of", "in", "on", "at", "by", "for", "to", "from", "with", "into", "its"}
)
_VOWELS = frozenset("aeiouy")
_KEEP_S = ("ss", "us", "is")
_UNDOUBLE = frozenset("bdfgkmnprt")  # stopped -> stop, but "fill", "pass", "buzz" stay
DERIVATIONS = (
    ("astic", "asia", 1),
    ("otic", "osis", 1),
    ("emic", "emia", 1),
    ("trophic", "trophy", 1),
    ("r", "", 3),  # fibular -> fibula: only after an "a" (_derive)
    ("l", "", 3),  # tibial -> tibia
)
"""``(suffix, the suffix of the word it meets, the fewest letters left before it)``: the
derivational pairs :func:`stem` folds (module docstring); ``r`` and ``l`` only after an
``a``."""


@dataclass(frozen=True, slots=True)
class Token:
    """``text[start:end]``; ``word`` is False for a punctuation character."""

    start: int
    end: int
    text: str
    word: bool


def tokenize(text: str) -> list[Token]:
    """The words and punctuation characters of ``text`` in order, with exact offsets."""
    return [
        Token(m.start(), m.end(), m.group(), not _is_punct(m.group()))
        for m in _TOKEN.finditer(text)
    ]


def _is_punct(piece: str) -> bool:
    return len(piece) == 1 and not piece.isalnum()


def stem(word: str) -> str:
    """The light suffix stem of a case-folded, accent-free ``word`` (rules in the module
    docstring); words under 4 letters and words with a non-letter are returned as they are."""
    if len(word) < 4 or not word.isalpha():
        return word
    if word.endswith("ies") and len(word) > 4:
        return _derive(word[:-3] + "y")
    if word.endswith("sses"):
        return word[:-2]
    if word.endswith("s") and not word.endswith(_KEEP_S):
        word = word[:-1]
    elif word.endswith("ing") and _has_vowel(word[:-3]) and len(word) > 5:
        word = _undouble(word[:-3])
    elif word.endswith("ed") and _has_vowel(word[:-2]) and len(word) > 4:
        word = _undouble(word[:-2])
    word = _derive(word)
    if word.endswith("e") and len(word) > 4:
        word = word[:-1]
    return word


def _derive(word: str) -> str:
    """``word`` with the first matching :data:`DERIVATIONS` pair applied."""
    for suffix, replacement, shortest in DERIVATIONS:
        base = word[: -len(suffix)]
        if word.endswith(suffix) and len(base) >= shortest and (replacement or base[-1] == "a"):
            return base + replacement
    return word


def _has_vowel(stem_: str) -> bool:
    return any(c in _VOWELS for c in stem_)


def _undouble(stem_: str) -> str:
    if len(stem_) > 2 and stem_[-1] == stem_[-2] and stem_[-1] in _UNDOUBLE:
        return stem_[:-1]
    return stem_


def _fold(word: str) -> str:
    """NFKC, case-folded; a prefix's hyphen, accents and a possessive ``'s`` stripped."""
    folded = unicodedata.normalize("NFKC", word).casefold().replace("-", "")
    if folded.endswith(_POSSESSIVE):
        folded = folded[:-2]
    bare = "".join(c for c in unicodedata.normalize("NFD", folded) if not unicodedata.combining(c))
    return unicodedata.normalize("NFC", bare)


def token_key(word: str) -> str:
    """The key of one word: NFKC, case-folded, accents stripped, then :func:`stem`."""
    return stem(_fold(word))


def acronym_key(word: str) -> str | None:
    """The case-sensitive key (``"^"`` + the word, NFKC) of a word shaped like an acronym, else
    ``None``: 2 to 5 letters and digits, at least one letter, every letter a capital, and not
    a Roman numeral ("MI", "WAS", "RB1", "S3"; not "Mi", "was", "II", "IV"). An acronym is
    matched only as written in capitals: "WAS" (Wiskott-Aldrich syndrome) is not "was", "ALL"
    (acute lymphoblastic leukemia) is not "all"."""
    word = unicodedata.normalize("NFKC", word)
    if not (2 <= len(word) <= 5 and word.isalnum() and word.isupper()):
        return None
    if not word.strip("IVXLC"):
        return None
    return "^" + word


@lru_cache(maxsize=1 << 17)
def content_key(word: str) -> str | None:
    """:func:`token_key` of ``word``, or ``None`` for a stop word (judged before stemming)."""
    folded = _fold(word)
    return None if folded in STOP_WORDS else stem(folded)
