"""Misspelled words matched to the dictionary's words: "headake", "migrane", "fatique".

QuickUMLS looks up each text token approximately (simstring over character trigrams). Here
the approximate lookup is one rule, fixed by construction rather than tuned on data: a text
word is read as a dictionary word when

* it has at least :data:`MIN_CHARS` letters and nothing but letters (short words and codes
  are never corrected: one edit turns "ataxia" into nothing else, but "rash" into "ash");
* it is neither a word of the dictionary's names nor an English word (the English list of
  ``pyspellchecker``, extra ``spelling``): a real word is never corrected (a word whose key
  meets a name's, "migrane" and "migrans" both "migran", still is);
* exactly one dictionary word, up to the dictionary's key folding, lies within
  :data:`MAX_EDITS` Damerau-Levenshtein edit of it, both compared as spoken
  (:func:`sound_key`: "ch" and "k", "ph" and "f" are one sound, so "headake" meets
  "headache"); where several do, the one that is an English word ("migrane": "migraine",
  not "migrans"); none, or several still, leave it as written.

Candidates come from an index of single-deletion variants (symmetric delete: a word within
one edit of another shares a deletion variant with it), so a lookup costs a few dictionary
reads, however long the name list; each word's answer is cached. The span keeps the text as
written; its ``query`` (the words corrected) is what the normalizer searches, and the
annotation names the correction in its provenance (``expansion_source`` ``"spelling"``).
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Collection, Iterable, Mapping
from dataclasses import replace
from functools import cache, lru_cache
from typing import TYPE_CHECKING

from rapidfuzz.distance import DamerauLevenshtein

from termnorm.annotate.dictionary import DictionaryDetector
from termnorm.annotate.spans import Span
from termnorm.annotate.tokens import content_key, tokenize
from termnorm.errors import MissingExtraError

if TYPE_CHECKING:
    from termnorm.search.candidate import RowResult

__all__ = [
    "MAX_EDITS",
    "MIN_CHARS",
    "SPELLING_SOURCE",
    "FuzzyDictionaryDetector",
    "SpellingCorrector",
    "english_words",
    "reading_misspellings",
    "sound_key",
    "spelled",
]

MIN_CHARS = 5
"""Fewest letters of a word that may be corrected."""
MAX_EDITS = 1
"""Most Damerau-Levenshtein edits between a word and its correction (on :func:`sound_key`)."""
SPELLING_SOURCE = "spelling"
"""The ``expansion_source`` of an annotation whose span was searched as corrected."""
_SOUNDS = (("ch", "k"), ("ph", "f"))
"""Spellings of one sound compared as one: ``(written, compared as)``."""
_lock = threading.Lock()
_made: weakref.WeakKeyDictionary[DictionaryDetector, FuzzyDictionaryDetector] = (
    weakref.WeakKeyDictionary()
)


def sound_key(word: str) -> str:
    """``word`` lower-cased, with each spelling of :data:`_SOUNDS` written as its sound."""
    key = word.lower()
    for written, sound in _SOUNDS:
        key = key.replace(written, sound)
    return key


@cache
def english_words() -> frozenset[str]:
    """The English words of ``pyspellchecker`` (lower case);
    :class:`~termnorm.errors.MissingExtraError` without it (``termnorm[spelling]``)."""
    try:
        from spellchecker import SpellChecker
    except ImportError as exc:
        raise MissingExtraError("pyspellchecker", "spelling") from exc
    return frozenset(SpellChecker(language="en", distance=1).word_frequency.keys())


class SpellingCorrector:
    """The correction of a misspelled word into one of ``words`` (the dictionary's name
    words), by the rule of the module doc; ``keys``: the content keys of the names (the
    dictionary's vocabulary: a word whose key is in none is no correction); ``english``:
    real words, never corrected."""

    def __init__(
        self, words: Iterable[str], keys: Mapping[str, int], english: Collection[str]
    ) -> None:
        self.words = {w.lower() for w in words}
        self.english = english
        self._variants: dict[str, set[str]] = {}
        for word in self.words:
            if _correctable_shape(word) and content_key(word) in keys:
                for variant in _deletions(sound_key(word)):
                    self._variants.setdefault(variant, set()).add(word)
        self.correct = lru_cache(maxsize=1 << 16)(self._correct)

    def _correct(self, word: str) -> str | None:
        """The one name word ``word`` is a misspelling of (lower case), else ``None``."""
        folded = word.lower()
        if not _correctable_shape(folded) or folded in self.english or folded in self.words:
            return None
        sound = sound_key(folded)
        near = {
            name
            for variant in _deletions(sound)
            for name in self._variants.get(variant, ())
            if DamerauLevenshtein.distance(sound, sound_key(name)) <= MAX_EDITS
        }
        if len({content_key(name) for name in near}) > 1:  # a tie: the English word, if one
            near = {name for name in near if name in self.english}
        keys = {content_key(name) for name in near}
        if len(keys) != 1 or keys == {content_key(folded)}:  # none, a tie, or no change
            return None
        return min(near)


def _correctable_shape(word: str) -> bool:
    return len(word) >= MIN_CHARS and word.isalpha()


def _deletions(word: str) -> set[str]:
    """``word`` and each string one deletion from it."""
    return {word, *(word[:i] + word[i + 1 :] for i in range(len(word)))}


class FuzzyDictionaryDetector(DictionaryDetector):
    """The dictionary detector of ``compiled`` that also reads the misspelled words
    ``corrector`` corrects (module doc); a span holding one has the corrected text as its
    ``query``."""

    def __init__(self, detector: DictionaryDetector, corrector: SpellingCorrector) -> None:
        super().__init__(detector.compiled, detector.variants, detector.paraphrases)
        self.corrector = corrector

    @classmethod
    def of(cls, detector: DictionaryDetector, names: Iterable[str]) -> FuzzyDictionaryDetector:
        """``detector`` reading misspellings of the words of ``names`` (its names' texts)."""
        words = {t.text for name in names for t in tokenize(name) if t.word}
        return cls(detector, SpellingCorrector(words, detector.compiled.vocab, english_words()))

    def detect(self, text: str) -> list[Span]:
        """Every name in ``text``, misspelled words read as corrected (the span's ``query``)."""
        return [self._queried(span) for span in super().detect(text)]

    def _content_tokens(self, text: str) -> tuple[list[int], list[int], list[int]]:
        starts, ends, ids = super()._content_tokens(text)
        for n, (start, end) in enumerate(zip(starts, ends, strict=True)):
            if end - start >= MIN_CHARS and (fixed := self.corrector.correct(text[start:end])):
                ids[n] = self._vocab[str(content_key(fixed))]
        return starts, ends, ids

    def _queried(self, span: Span) -> Span:
        """``span`` with its corrected text as ``query`` when a word of it was corrected."""
        pieces, at = [], 0
        for token in tokenize(span.text):
            fixed = self.corrector.correct(token.text) if token.word else None
            if fixed is not None:
                pieces += [span.text[at : token.start], fixed]
                at = token.end
        return replace(span, query="".join([*pieces, span.text[at:]])) if pieces else span


def reading_misspellings(
    detector: DictionaryDetector, names: Iterable[str]
) -> FuzzyDictionaryDetector:
    """:meth:`FuzzyDictionaryDetector.of` ``detector`` and ``names``, made once per detector
    (the dictionary detectors are themselves kept per index and synonyms)."""
    with _lock:
        if detector not in _made:
            _made[detector] = FuzzyDictionaryDetector.of(detector, names)
        return _made[detector]


def spelled(result: RowResult, span: Span) -> RowResult:
    """``result`` (the normalizer's answer to ``span.query``) with each candidate naming the
    span's text, the corrected text and :data:`SPELLING_SOURCE` (or the span's
    ``query_source``); ``result`` itself when the span was searched as written."""
    if not span.query:
        return result
    named = [
        c._replace(
            expanded_from=span.text,
            expansion=span.query,
            expansion_source=span.query_source or SPELLING_SOURCE,
        )
        for c in result.candidates
    ]
    return result._replace(candidates=named)
