"""Rule-based sentence boundaries over the original text, as ``(start, end)`` offsets.

The text is never rewritten: offsets are code-point offsets (Python ``str`` indices) into
the text as given, so CRLF line ends, NBSP, emoji, combining marks and zero-width joiners
keep their positions, and ``text[start:end]`` is the sentence. A sentence starts at its
first non-whitespace character and ends after its last one; whitespace between sentences
belongs to none, and a text of whitespace only has no sentences.

The rules, in order:

1. **Paragraph breaks** end a sentence: a blank line, i.e. two or more line breaks with only
   horizontal whitespace between them (``"\\n\\n"``, ``"\\r\\n\\r\\n"``, ``"\\r\\r"``,
   ``"\\n \\t\\n"``). A single line break does not: hard-wrapped text keeps its sentences.
   Line breaks are ``\\r\\n``, ``\\r``, ``\\n``, ``\\x85``, U+2028 and U+2029.
2. **Terminal punctuation** ends a sentence: a run of ``.``, ``!`` or ``?`` (``"..."`` and
   ``"?!"`` included), with the closing quotes and brackets after it, followed by
   whitespace (NBSP counts). Punctuation inside a token never does: ``"2.5 mg"``, ``"e.g."``'s
   inner period, ``"www.x.org"``.
3. **Exceptions** to rule 2 (the sentence goes on):
   - the next non-whitespace character is a lower-case letter (``"approx. three"``,
     ``"i.e. the"``);
   - a lone period after a known abbreviation (:data:`ABBREVIATIONS`, compared in lower
     case: ``"Dr. Smith"``, ``"vs. Placebo"``, ``"e.g. Aspirin"``, ``"et al. Nature"``);
   - a lone period after a single letter, taken as an initial (``"J. Smith"``,
     ``"E. coli"``); so ``"vitamin A. Then"`` is one sentence (a known limit);
   - a lone period after a number of one to three digits that opens its line, taken as an
     enumeration (``"1. Chest pain"``).
   ``"etc."`` is not an abbreviation here: it ends sentences as often as not.
"""

from __future__ import annotations

import re

__all__ = ["ABBREVIATIONS", "sentence_spans"]

ABBREVIATIONS = frozenset(
    {
        # Latin and reference abbreviations
        "e.g", "i.e", "vs", "cf", "viz", "approx", "ca", "al", "fig", "figs", "no", "nos",
        "vol", "pp", "ref", "refs", "eq", "resp", "incl", "sp", "spp",
        # titles
        "dr", "drs", "mr", "mrs", "ms", "prof", "st", "jr", "sr",
        # German clinical shorthand (Verdacht auf, Zustand nach, zum Ausschluss, ...)
        "v.a", "z.n", "z.a", "z.b", "bzw", "ggf", "u.a",
    }
)  # fmt: skip
"""Words whose period does not end a sentence (lower case, without the final period)."""

_LINE_BREAK = r"(?:\r\n|\r(?!\n)|[\n\x85\u2028\u2029])"  # CRLF is one break
_PARAGRAPH_BREAK = re.compile(rf"{_LINE_BREAK}(?:[^\S\r\n\x85\u2028\u2029]*{_LINE_BREAK})+")
_LINE_BREAK_CHARS = "\r\n\x85\u2028\u2029"
_CLOSERS = "\"'\u201d\u2019)]}\u00bb"
_OPENERS = "\"'\u201c\u2018([{\u00ab"
_TERMINAL = re.compile(rf"[.!?]+[{re.escape(_CLOSERS)}]*(?=\s)")


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """The sentences of ``text`` as ``(start, end)`` code-point offsets, in order, each
    stripped of surrounding whitespace (see the module docstring for the rules)."""
    spans: list[tuple[int, int]] = []
    for par_start, par_end in _paragraphs(text):
        start = par_start
        for match in _TERMINAL.finditer(text, par_start, par_end):
            if _ends_sentence(text, match, par_end):
                spans.extend(_stripped(text, start, match.end()))
                start = match.end()
        spans.extend(_stripped(text, start, par_end))
    return spans


def _paragraphs(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of the stretches between paragraph breaks (unstripped)."""
    bounds, start = [], 0
    for match in _PARAGRAPH_BREAK.finditer(text):
        bounds.append((start, match.start()))
        start = match.end()
    bounds.append((start, len(text)))
    return bounds


def _stripped(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """``[(start', end')]`` with the whitespace at both ends cut off; ``[]`` if none is left."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return [(start, end)] if start < end else []


def _ends_sentence(text: str, match: re.Match[str], limit: int) -> bool:
    """Whether the terminal punctuation ``match`` ends a sentence (rules 2 and 3)."""
    following = _next_visible(text, match.end(), limit)
    if following is None or following.islower():
        return False
    if text[match.start() : match.end()].rstrip(_CLOSERS) != ".":
        return True
    word_start = _word_start(text, match.start())
    word = text[word_start : match.start()].lstrip(_OPENERS)
    if word.lower() in ABBREVIATIONS or (len(word) == 1 and word.isalpha()):
        return False
    return not (word.isdigit() and len(word) <= 3 and _opens_line(text, word_start))


def _next_visible(text: str, position: int, limit: int) -> str | None:
    """The first non-whitespace character of ``text[position:limit]``, or ``None``."""
    for index in range(position, limit):
        if not text[index].isspace():
            return text[index]
    return None


def _word_start(text: str, end: int) -> int:
    """Where the whitespace-delimited word that ends at ``end`` begins."""
    start = end
    while start > 0 and not text[start - 1].isspace():
        start -= 1
    return start


def _opens_line(text: str, position: int) -> bool:
    """Whether only horizontal whitespace lies between the line's start and ``position``."""
    index = position
    while index > 0 and text[index - 1].isspace() and text[index - 1] not in _LINE_BREAK_CHARS:
        index -= 1
    return index == 0 or text[index - 1] in _LINE_BREAK_CHARS
