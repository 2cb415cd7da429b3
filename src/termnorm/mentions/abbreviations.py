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

**Ab3P runs in a process of its own** (:mod:`termnorm.mentions.ab3p_worker`, started on
first use and kept): it is C++ and crashes the process it runs in on some inputs (a
segmentation fault on a long run of text), and documents come from anyone (the service).
A crash ends the worker only: :func:`detect_abbreviations` raises :class:`AbbreviationError`
for that document and the next call starts a new worker. :class:`DocumentAbbreviations`
reports such a document as unread (:meth:`DocumentAbbreviations.unread`) and expands none of
its mentions, so the document is still normalized, without its short forms. A worker that
does not answer within a deadline (:data:`AB3P_TIMEOUT`, 30 s by default, a thousand times
what Ab3P takes on a 100,000-character document; the ``timeout`` of
:func:`detect_abbreviations`) is killed and its document reported the same way, so a hang
never holds a request forever. Text that is
not valid Unicode (a lone surrogate) is sent with ``?`` in place of each such code point.
Ab3P's own diagnostics (``Failed to find sentence: ...``, written when it cannot map a
sentence back to the text) go to the null device in the worker; they never reach the
caller's output.
"""

from __future__ import annotations

import atexit
import importlib.util
import json
import logging
import os
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterable, Mapping
from enum import Enum
from pathlib import Path
from typing import IO, NamedTuple

from termnorm.errors import AbbreviationError, MissingExtraError, TermnormError
from termnorm.mentions.ab3p_worker import read_message, write_message
from termnorm.mentions.mention import Mention

__all__ = [
    "AB3P_TIMEOUT",
    "Abbreviation",
    "AbbreviationError",
    "AbbreviationMode",
    "DocumentAbbreviations",
    "Expansion",
    "detect_abbreviations",
    "expand",
    "parse_abbreviation_mode",
    "short_form_map",
    "short_form_pattern",
]

logger = logging.getLogger(__name__)

AB3P_TIMEOUT = 30.0
"""Seconds Ab3P may take on one document before its worker is killed (module doc)."""

_lock = threading.Lock()
_WORKER_SCRIPT = Path(__file__).with_name("ab3p_worker.py")
# Runs the worker script without putting its folder first on sys.path (Python 3.10 has no -P).
_BOOT = "import runpy, sys; del sys.path[0]; runpy.run_path(sys.argv[1], run_name='__main__')"
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


def _require_ab3p() -> None:
    """Raise :class:`~termnorm.errors.MissingExtraError` when ``pyab3p`` is not installed
    (checked without loading its native code into this process)."""
    if importlib.util.find_spec("pyab3p") is None:
        raise MissingExtraError("pyab3p", "abbreviations")


def _exit_reason(code: int) -> str:
    """How a worker ended, in words (``killed by SIGSEGV``, ``exited with code 1``)."""
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exited with code {code}"


class _Worker:
    """One running Ab3P worker process, owned by the process that started it."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.process = subprocess.Popen(
            [sys.executable, "-c", _BOOT, str(_WORKER_SCRIPT)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        reply = self._receive()
        if reply is None or "ready" not in reply:
            why = reply["error"] if reply else _exit_reason(self.process.wait())
            self.close()
            raise TermnormError(
                f"Ab3P could not start ({why}): reinstall it (pip install "
                "'termnorm[abbreviations]'), or turn abbreviation expansion off "
                "(--abbreviations none)"
            )

    @property
    def _pipes(self) -> tuple[IO[bytes], IO[bytes]]:
        assert self.process.stdin is not None and self.process.stdout is not None
        return self.process.stdin, self.process.stdout

    def _receive(self) -> dict[str, object] | None:
        payload = read_message(self._pipes[1])
        return None if payload is None else json.loads(payload)

    def pairs(self, text: str, timeout: float) -> list[list[object]]:
        """Ab3P's ``[short, long, precision]`` triples of ``text``; :class:`AbbreviationError`
        when the worker fails on it, dies, or has not answered after ``timeout`` seconds (it
        is then killed); after a death or a kill :attr:`alive` is false."""
        expired = threading.Event()

        def kill() -> None:
            expired.set()
            self.process.kill()  # the blocked write or read below then ends

        timer = threading.Timer(timeout, kill)
        timer.start()
        try:
            write_message(self._pipes[0], text.encode("utf-8", "replace"))
            reply = self._receive()
        except BrokenPipeError:
            reply = None
        finally:
            timer.cancel()
        if reply is None and expired.is_set():
            self.process.wait()
            raise AbbreviationError(
                f"Ab3P did not answer on this document within {timeout:g} s (its worker was "
                "stopped); its abbreviations were not read, so its short forms are not expanded"
            )
        if reply is None:
            raise AbbreviationError(
                f"Ab3P crashed on this document ({_exit_reason(self.process.wait())}); its "
                "abbreviations were not read, so its short forms are not expanded"
            )
        if "error" in reply:
            raise AbbreviationError(
                f"Ab3P failed on this document ({reply['error']}); its abbreviations were "
                "not read, so its short forms are not expanded"
            )
        return reply["pairs"]  # type: ignore[return-value]  # the worker's protocol

    @property
    def alive(self) -> bool:
        """Whether the worker process is still running."""
        return self.process.poll() is None

    def close(self) -> None:
        """End the worker (closing its input ends its loop) and wait for it."""
        for pipe in self._pipes:
            pipe.close()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


_worker: _Worker | None = None


def _current_worker() -> _Worker:
    """This process's worker, started when there is none or the last one died (a forked
    child never uses its parent's pipes: it starts its own)."""
    global _worker
    if _worker is None or _worker.pid != os.getpid() or not _worker.alive:
        if _worker is not None and _worker.pid == os.getpid():
            _worker.close()
        _worker = _Worker()
    return _worker


@atexit.register
def _close_worker() -> None:
    global _worker
    with _lock:
        if _worker is not None and _worker.pid == os.getpid():
            _worker.close()
        _worker = None


def detect_abbreviations(text: str, timeout: float = AB3P_TIMEOUT) -> list[Abbreviation]:
    """The short-form/long-form pairs Ab3P finds in ``text``, in document order.

    Ab3P runs in a worker process (module doc): raises :class:`AbbreviationError` when it
    crashes or fails on ``text``, or has not answered after ``timeout`` seconds (the worker
    is then killed; the next call starts a new one), and
    :class:`~termnorm.errors.MissingExtraError` when ``pyab3p`` is not installed. Nothing
    Ab3P prints reaches the caller's standard output or error. ``timeout`` must be positive.
    """
    if timeout <= 0:
        raise ValueError(f"timeout must be positive seconds, got {timeout}")
    if not text.strip():
        return []
    _require_ab3p()
    with _lock:
        found = _current_worker().pairs(text, timeout)
    return [Abbreviation(str(sf), str(lf), float(p)) for sf, lf, p in found]  # type: ignore[arg-type]


def short_form_map(abbreviations: Iterable[Abbreviation]) -> dict[str, str]:
    """``short form -> long form``, the most precise long form kept (the first on a tie)."""
    best: dict[str, Abbreviation] = {}
    for abbr in abbreviations:
        kept = best.get(abbr.short_form)
        if kept is None or abbr.precision > kept.precision:
            best[abbr.short_form] = abbr
    return {sf: abbr.long_form for sf, abbr in best.items()}


def short_form_pattern(short_forms: Iterable[str]) -> re.Pattern[str] | None:
    """One pattern matching each of ``short_forms`` as a whole token (module doc), the
    longest first; ``None`` when there is none."""
    forms = sorted(set(short_forms), key=lambda sf: (-len(sf), sf))
    if not forms:
        return None
    alternation = "|".join(re.escape(sf) for sf in forms)
    return re.compile(f"{_BOUNDARY_BEFORE}(?:{alternation}){_BOUNDARY_AFTER}")


class _Expander:
    """One document's pairs, compiled into one alternation (longest short form first)."""

    def __init__(self, pairs: Mapping[str, str]) -> None:
        self.pairs = {sf: lf for sf, lf in pairs.items() if sf.strip() and lf.strip()}
        self.pattern = short_form_pattern(self.pairs)

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
            _require_ab3p()  # a missing extra fails here, before any work
            detector = detect_abbreviations
        self.detector: Callable[[str], list[Abbreviation]] = detector or (lambda text: [])
        self._expanders: dict[str, _Expander] = {}
        self._unread: dict[str, str] = {}

    def _expander(self, doc_id: str) -> _Expander:
        expander = self._expanders.get(doc_id)
        if expander is None:
            if doc_id not in self.documents:
                raise KeyError(
                    f"document {doc_id!r} has no text: give every mention's document, "
                    "or use abbreviation mode 'none'"
                )
            try:
                pairs = short_form_map(self.detector(self.documents[doc_id]))
            except AbbreviationError as exc:  # doc_id may be the text itself: shown cut
                shown = doc_id if len(doc_id) <= 60 else f"{doc_id[:57]}..."
                logger.warning("document %r: %s", shown, exc)
                self._unread[doc_id] = str(exc)
                pairs = {}
            expander = self._expanders[doc_id] = _Expander(pairs)
        return expander

    def unread(self, doc_id: str) -> str | None:
        """Why the abbreviations of document ``doc_id`` could not be read (its mentions are
        then left as written), or ``None``: read, not yet asked for, or mode ``none``."""
        return self._unread.get(doc_id)

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
