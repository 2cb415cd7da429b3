"""Which language's assertion rules a document gets: declared, or detected from its words.

The shipped ConText rules (:mod:`termnorm.annotate.assertion_rules`) exist for English,
French, German, Spanish and Dutch (:class:`RuleLanguage`). A document's language is, in
order of precedence:

1. **declared** — the caller's ``language`` (``--language``, ``language=``, the service's
   ``language``, the spaCy config's ``language``), or the document's own ``lang`` (a JSON
   Lines field, a service document's ``lang``), the document's winning over the caller's
   ``auto``;
2. **detected** — :func:`detect_language` over the text: the frequency of each language's
   common function words and of the words of its shipped trigger rules (a word shared by
   several languages counts a share to each), plus French elisions (``d'``, ``l'``); the
   highest score wins, a tie goes to the earlier of en, fr, de, es, nl;
3. **fallback** — English, when detection found none of those words (a list of terms, a
   text too short), or when a declared language has no shipped rules (its tag is kept in
   :attr:`LanguageChoice.declared` so the user sees what was asked).

:func:`choose_language` applies that order and says where the answer came from
(:class:`LanguageSource`); the annotation rows carry both as ``assertion_language`` and
``assertion_language_source``.
"""

from __future__ import annotations

import functools
import re
from enum import Enum
from typing import NamedTuple

from termnorm.annotate.assertion_rules import AssertionRules, RuleLanguage, literal_key

__all__ = [
    "AUTO",
    "LanguageChoice",
    "LanguageSource",
    "RuleLanguage",
    "choose_language",
    "detect_language",
    "language_scores",
    "parse_language",
]

AUTO = "auto"
"""The ``language`` option's value that asks for detection (the default)."""


class LanguageSource(str, Enum):
    """Where a document's rule language came from."""

    DECLARED = "declared"
    DETECTED = "detected"
    FALLBACK = "fallback"


class LanguageChoice(NamedTuple):
    """The rules applied (``language``), why (``source``), and the declared tag when it was
    one without shipped rules (``declared``, else ``None``)."""

    language: RuleLanguage
    source: LanguageSource
    declared: str | None = None


def _listed(words: str) -> frozenset[str]:
    """The white-space separated ``words`` as a set."""
    return frozenset(words.split())


# Frequent words of each language in clinical text: function words and the commonest
# triggers. A word listed under several languages ("de", "no", "la") counts a share to each.
_WORDS: dict[RuleLanguage, frozenset[str]] = {
    RuleLanguage.EN: _listed(
        "the and of with no not is was in for to a an on at patient history denies without "
        "has had this that or by which but"
    ),
    RuleLanguage.FR: _listed(
        "le la les de des du et pas est une un avec sans dans sur pour au aux aucun aucune "
        "patient patiente antécédents antécédent présente absence suspicion chez il elle ne "
        "mais ni non qui"
    ),
    RuleLanguage.DE: _listed(
        "der die das und mit kein keine keinen nicht ist ein eine einer bei auf zu von im "
        "ohne patient patientin verdacht zustand nach wurde des dem den aber"
    ),
    RuleLanguage.ES: _listed(
        "el la los las de del y con sin no es un una por que en paciente presenta refiere "
        "niega antecedentes sospecha se al pero ni"
    ),
    RuleLanguage.NL: _listed(
        "de het een en met geen niet van is bij op zonder werd patiënt patient in "
        "voorgeschiedenis verdenking er ook maar dat"
    ),
}
_ORDER = tuple(RuleLanguage)
_TOKEN = re.compile(r"\w+(?:['’]\w+)*|\b[dlnjcsq]['’]", re.IGNORECASE)
_ELISION = re.compile(r"^[dlnjcsq]['’]", re.IGNORECASE)
_RULE_WORD = re.compile(r"[^\W\d_]{2,}")


@functools.cache
def _vocabulary() -> dict[RuleLanguage, frozenset[str]]:
    """Each language's scoring words: its function words and every word of at least two
    letters in its shipped trigger rules."""
    return {
        language: _WORDS[language]
        | {
            word
            for rule in AssertionRules.for_language(language).rules
            for word in _RULE_WORD.findall(literal_key(rule.literal))
        }
        for language in _ORDER
    }


def language_scores(text: str) -> dict[RuleLanguage, float]:
    """Each language's score over ``text`` (module doc): a share of 1 per listed word
    (function words and trigger words), 1 per French elision; all zero for a text with none
    of them."""
    scores = dict.fromkeys(_ORDER, 0.0)
    vocabulary = _vocabulary()
    for token in _TOKEN.findall(text):
        word = literal_key(token)
        if _ELISION.match(word):
            scores[RuleLanguage.FR] += 1.0
            word = word[2:]
        owners = [language for language in _ORDER if word in vocabulary[language]]
        for language in owners:
            scores[language] += 1.0 / len(owners)
    return scores


def detect_language(text: str) -> RuleLanguage | None:
    """The language of ``text`` among :class:`RuleLanguage` by :func:`language_scores`,
    ties to the earlier of en, fr, de, es, nl; ``None`` when no word scored."""
    scores = language_scores(text)
    best = max(_ORDER, key=lambda language: (scores[language], -_ORDER.index(language)))
    return best if scores[best] > 0 else None


def parse_language(value: str) -> RuleLanguage | None:
    """A declared language tag as a :class:`RuleLanguage`: the primary subtag of a BCP 47 or
    POSIX tag, any case ("fr", "FR", "fr-CA", "de_AT"); ``None`` for a language without
    shipped rules. ``ValueError`` for an empty tag or ``auto`` (not a language)."""
    primary = re.split(r"[-_]", value.strip().lower(), maxsplit=1)[0]
    if not primary or primary == AUTO:
        raise ValueError(
            f"{value!r} is not a language tag; give an ISO 639-1 code such as "
            f"{', '.join(language.value for language in RuleLanguage)}, or {AUTO!r} to detect"
        )
    try:
        return RuleLanguage(primary)
    except ValueError:
        return None


def choose_language(text: str, declared: str | None = None) -> LanguageChoice:
    """The rule language of a document ``text`` (module doc): ``declared`` (``None`` or
    ``auto``: detect) when it has shipped rules, else detection, else English."""
    if declared is not None and declared.strip().lower() != AUTO:
        language = parse_language(declared)
        if language is not None:
            return LanguageChoice(language, LanguageSource.DECLARED)
        return LanguageChoice(RuleLanguage.EN, LanguageSource.FALLBACK, declared)
    detected = detect_language(text)
    if detected is None:
        return LanguageChoice(RuleLanguage.EN, LanguageSource.FALLBACK)
    return LanguageChoice(detected, LanguageSource.DETECTED)
