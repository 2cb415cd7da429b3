"""Abbreviations a mention's document defines: detection with Ab3P, expansion of mentions.

A document defines a short form through its long form ("bipolar affective disorder (BPAD)")
and then uses the short form alone ("BPAD", "BPAD patients"), which a terminology seldom
lists. :class:`DocumentAbbreviations` detects the pairs of each document once, with Ab3P
(Sohn, Comeau, Kim & Wilbur 2008, through the ``pyab3p`` binding: ``pip install
'termnorm[abbreviations]'``), and :func:`expand` rewrites a mention through its document's
pairs:

* a short form matches case-sensitively and as a whole token: neither preceded nor followed
  by a letter, a digit, ``_`` or ``-`` ("BPAD" matches in "BPAD patients", not in "BPADs"
  nor in "anti-BPAD");
* every short form of the mention is rewritten, in one pass (an inserted long form is never
  rewritten again); where two short forms overlap, the longer one wins;
* a short form whose long form the mention already contains (case-insensitively) is left
  as it is, so "bipolar affective disorder (BPAD)" is not doubled;
* pairs belong to their document: one document's pairs never expand another's mention;
* Ab3P may report one short form with several long forms in a document: the one with the
  highest precision estimate is kept, the first in the document on a tie.

Ab3P (C++) writes ``Failed to find sentence: ...`` diagnostics to the process's standard
error when it cannot map a sentence back to the text (e.g. after a double space); the pairs
of those documents are still found, only Ab3P's character offsets are then unreliable (they
are not exposed here). :func:`detect_abbreviations` discards everything Ab3P writes to the
file descriptors 1 and 2 during a call, so termnorm's own output stays clean; while a call
runs, writes of other threads to those descriptors are discarded too.
"""

from __future__ import annotations

import ctypes
import os
import re
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from enum import Enum
from typing import Any, NamedTuple

from termnorm.errors import MissingExtraError
from termnorm.mentions.mention import Mention

__all__ = [
    "Abbreviation",
    "AbbreviationMode",
    "DocumentAbbreviations",
    "Expansion",
    "detect_abbreviations",
    "expand",
    "parse_abbreviation_mode",
    "short_form_map",
]

_lock = threading.Lock()
_ab3p: Any = None
_BOUNDARY_BEFORE = r"(?<![\w-])"
_BOUNDARY_AFTER = r"(?![\w-])"


class AbbreviationMode(str, Enum):
    """How mentions are expanded: through Ab3P's pairs from their document, or not at all."""

    AB3P = "ab3p"
    NONE = "none"


class Abbreviation(NamedTuple):
    """One short-form/long-form pair defined in a document, with Ab3P's precision estimate."""

    short_form: str
    long_form: str
    precision: float


class Expansion(NamedTuple):
    """A mention's text to normalize, and its original text when an expansion changed it."""

    text: str
    expanded_from: str | None


def parse_abbreviation_mode(value: AbbreviationMode | str) -> AbbreviationMode:
    """``value`` as an :class:`AbbreviationMode`; an unknown name lists the known ones."""
    try:
        return AbbreviationMode(value)
    except ValueError:
        known = ", ".join(m.value for m in AbbreviationMode)
        raise ValueError(f"unknown abbreviation mode {value!r}; known modes: {known}") from None


def _require_ab3p() -> Any:
    """The process's one ``pyab3p.Ab3p`` detector, created on first use."""
    global _ab3p
    if _ab3p is None:
        try:
            import pyab3p
        except ImportError:
            raise MissingExtraError("pyab3p", "abbreviations") from None
        _ab3p = pyab3p.Ab3p()
    return _ab3p


def _flush_c_stdio() -> None:
    """Flush the C library's stdio buffers (C++ ``cout``/``cerr`` write through them)."""
    libc = ctypes.cdll.msvcrt if sys.platform == "win32" else ctypes.CDLL(None)
    libc.fflush(None)


@contextmanager
def _silenced_fds(fds: tuple[int, ...] = (1, 2)) -> Iterator[None]:
    """Send what is written to ``fds`` inside the block to the null device, then restore them.

    Python's own buffers are flushed before (so nothing of termnorm's is lost) and the C
    library's after (so nothing the native code buffered leaks once the descriptors are back).
    """
    for stream in (sys.stdout, sys.stderr):
        if stream is not None:
            stream.flush()
    saved = [os.dup(fd) for fd in fds]
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        for fd in fds:
            os.dup2(null, fd)
        yield
    finally:
        _flush_c_stdio()
        for fd, copy in zip(fds, saved, strict=True):
            os.dup2(copy, fd)
            os.close(copy)
        os.close(null)


def detect_abbreviations(text: str) -> list[Abbreviation]:
    """The short-form/long-form pairs Ab3P finds in ``text``, in document order.

    Nothing Ab3P prints reaches the caller's standard output or error (see the module doc).
    Raises :class:`~termnorm.errors.MissingExtraError` when ``pyab3p`` is not installed.
    """
    if not text.strip():
        return []
    with _lock:
        ab3p = _require_ab3p()
        with _silenced_fds():
            found = ab3p.get_abbrs(text)
    return [Abbreviation(a.short_form, a.long_form, float(a.prec)) for a in found]


def short_form_map(abbreviations: Iterable[Abbreviation]) -> dict[str, str]:
    """``short form -> long form``, the most precise long form kept (the first on a tie)."""
    best: dict[str, Abbreviation] = {}
    for abbr in abbreviations:
        kept = best.get(abbr.short_form)
        if kept is None or abbr.precision > kept.precision:
            best[abbr.short_form] = abbr
    return {sf: abbr.long_form for sf, abbr in best.items()}


class _Expander:
    """One document's pairs, compiled into one alternation (longest short form first)."""

    def __init__(self, pairs: Mapping[str, str]) -> None:
        self.pairs = {sf: lf for sf, lf in pairs.items() if sf.strip() and lf.strip()}
        self.pattern: re.Pattern[str] | None = None
        if self.pairs:
            forms = sorted(self.pairs, key=lambda sf: (-len(sf), sf))
            alternation = "|".join(re.escape(sf) for sf in forms)
            self.pattern = re.compile(f"{_BOUNDARY_BEFORE}(?:{alternation}){_BOUNDARY_AFTER}")

    def __call__(self, text: str) -> Expansion:
        if self.pattern is None:
            return Expansion(text, None)
        folded = text.casefold()

        def long_form(match: re.Match[str]) -> str:
            lf = self.pairs[match.group(0)]
            return match.group(0) if lf.casefold() in folded else lf

        expanded = self.pattern.sub(long_form, text)
        return Expansion(expanded, text if expanded != text else None)


def expand(mention_text: str, pairs: Mapping[str, str]) -> Expansion:
    """``mention_text`` with each defined short form rewritten through its long form.

    ``pairs`` maps short forms to long forms (one document's, see :func:`short_form_map`);
    the matching rules are the module doc's. ``expanded_from`` is the original text when
    something was rewritten, else ``None``.

    >>> expand("BPAD patients", {"BPAD": "bipolar affective disorder"})
    Expansion(text='bipolar affective disorder patients', expanded_from='BPAD patients')
    """
    return _Expander(pairs)(mention_text)


class DocumentAbbreviations:
    """The pairs of each document of a corpus, detected once per document (on first use).

    ``documents`` maps document IDs to their text (see
    :func:`~termnorm.mentions.read_documents`). With ``mode="none"`` nothing is detected and
    every mention keeps its text. ``detector`` replaces Ab3P (any ``text -> abbreviations``
    function). Asking for a document that is not in ``documents`` is an error: a mention
    whose document is unknown cannot be expanded, and is not silently left as it is.
    """

    def __init__(
        self,
        documents: Mapping[str, str],
        mode: AbbreviationMode | str = AbbreviationMode.AB3P,
        detector: Callable[[str], list[Abbreviation]] | None = None,
    ) -> None:
        self.documents = documents
        self.mode = parse_abbreviation_mode(mode)
        if self.mode is AbbreviationMode.AB3P and detector is None:
            with _lock:
                _require_ab3p()  # a missing extra fails here, before any work
            detector = detect_abbreviations
        self.detector: Callable[[str], list[Abbreviation]] = detector or (lambda text: [])
        self._expanders: dict[str, _Expander] = {}

    def _expander(self, doc_id: str) -> _Expander:
        expander = self._expanders.get(doc_id)
        if expander is None:
            if doc_id not in self.documents:
                raise KeyError(
                    f"document {doc_id!r} has no text: give every mention's document, "
                    "or use abbreviation mode 'none'"
                )
            pairs = short_form_map(self.detector(self.documents[doc_id]))
            expander = self._expanders[doc_id] = _Expander(pairs)
        return expander

    def pairs(self, doc_id: str) -> dict[str, str]:
        """``short form -> long form`` of document ``doc_id`` (empty in mode ``none``)."""
        if self.mode is AbbreviationMode.NONE:
            return {}
        return dict(self._expander(doc_id).pairs)

    def expand(self, mention_text: str, doc_id: str) -> Expansion:
        """:func:`expand` with the pairs of document ``doc_id``."""
        if self.mode is AbbreviationMode.NONE:
            return Expansion(mention_text, None)
        return self._expander(doc_id)(mention_text)

    def expand_mentions(self, mentions: Iterable[Mention]) -> list[Expansion]:
        """One :class:`Expansion` per mention, in order, each through its own document."""
        return [self.expand(m.text, m.doc_id) for m in mentions]
