"""Keyword vocabularies: the *site* and *type* words a keyword-attentive ranker looks at.

A :class:`KeywordVocabulary` holds two disjoint sets of keywords — anatomical or procedure
*sites* ("kidney", "renal", "甲状腺") and disease or procedure *types* ("carcinoma",
"syndrome", "切除术") — and finds them in a text (:meth:`KeywordVocabulary.spans`):

* a keyword written in CJK characters is matched as a substring (Chinese has no spaces);
* any other keyword is matched on whole words: the text and the keyword are split into words
  (runs of letters and digits; case, hyphens and punctuation ignored), and a keyword of n
  words matches n consecutive words. A one-word keyword also matches the word with a plural
  ``s`` (``kidneys``).

Matching is leftmost-longest and spans never overlap. Spans are character offsets into the
text as given: ``(start, end, kind)`` with ``kind`` ``"site"`` or ``"type"``.

File format (:func:`read_keywords` / :meth:`KeywordVocabulary.save`): UTF-8 TSV with the
header ``keyword<TAB>kind`` (kind ``site`` or ``type``), one keyword a line; lines starting
with ``#`` are comments, and a comment ``# lang: xx`` gives the vocabulary's language. The
vocabularies shipped with termnorm (``kg/data/``) are built by ``termnorm kg keywords``
(:mod:`termnorm.kg.keyword_mining` says how).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from enum import Enum
from functools import cached_property
from importlib import resources
from pathlib import Path
from typing import TypeVar

from termnorm.errors import InputFormatError

__all__ = [
    "BUILTIN_KEYWORDS",
    "HEADER",
    "KeywordKind",
    "KeywordVocabulary",
    "builtin_keywords_path",
    "is_cjk",
    "longest_first",
    "read_keywords",
]

HEADER = "keyword\tkind"
BUILTIN_KEYWORDS = {"en": "keywords_en.tsv", "zh": "keywords_zh_procedures.tsv"}
"""The shipped vocabularies by language (files in ``termnorm/kg/data``)."""

_CJK = re.compile(r"[\u2e80-\u2fff\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_CJK_RUN = re.compile(_CJK.pattern + "+")
_WORD = re.compile(r"[^\W_]+")
V = TypeVar("V")


class KeywordKind(str, Enum):
    """What a keyword names."""

    SITE = "site"
    TYPE = "type"


def longest_first(
    count: int, longest: int, lookup: Callable[[int, int], V | None]
) -> list[tuple[int, int, V]]:
    """Left-to-right, longest-first, non-overlapping matches over ``count`` items: at item
    ``i`` the largest ``n <= longest`` for which ``lookup(i, n)`` (items ``i .. i+n-1``) is
    not ``None``, as ``(i, n, value)``; the scan goes on after a match, else at ``i + 1``."""
    out: list[tuple[int, int, V]] = []
    i = 0
    while i < count:
        for n in range(min(longest, count - i), 0, -1):
            value = lookup(i, n)
            if value is not None:
                out.append((i, n, value))
                i += n
                break
        else:
            i += 1
    return out


def is_cjk(text: str) -> bool:
    """Whether ``text`` holds a CJK character (such keywords match as substrings)."""
    return _CJK.search(text) is not None


def _words(text: str) -> list[re.Match[str]]:
    """Word matches of ``text`` that hold no CJK character (those are matched as substrings)."""
    return [m for m in _WORD.finditer(text) if not is_cjk(m.group())]


def _key(keyword: str) -> str:
    """The matching form of a keyword: lower-case words joined by one space (CJK: as is)."""
    keyword = keyword.strip().lower()
    if is_cjk(keyword):
        return "".join(keyword.split())
    return " ".join(m.group() for m in _words(keyword))


@dataclass(frozen=True)
class KeywordVocabulary:
    """Site and type keywords of a language (module doc); ``sites`` and ``types`` are
    disjoint after normalisation, else ``ValueError``."""

    sites: frozenset[str]
    types: frozenset[str]
    lang: str
    _kinds: dict[str, KeywordKind] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        kinds: dict[str, KeywordKind] = {}
        for words, kind in ((self.sites, KeywordKind.SITE), (self.types, KeywordKind.TYPE)):
            for word in words:
                key = _key(word)
                if not key:
                    continue
                if kinds.get(key, kind) is not kind:
                    raise ValueError(f"keyword {word!r} is both a site and a type; keep one")
                kinds[key] = kind
        object.__setattr__(self, "_kinds", kinds)

    def __len__(self) -> int:
        return len(self._kinds)

    @cached_property
    def _limits(self) -> tuple[int, int]:
        """(longest CJK keyword in characters, longest other keyword in words)."""
        cjk = [len(k) for k in self._kinds if is_cjk(k)]
        words = [k.count(" ") + 1 for k in self._kinds if not is_cjk(k)]
        return max(cjk, default=0), max(words, default=0)

    def kind(self, keyword: str) -> KeywordKind | None:
        """The kind of ``keyword`` (matching form, see module doc), ``None`` if not in it."""
        return self._kinds.get(_key(keyword))

    def spans(self, text: str) -> list[tuple[int, int, str]]:
        """``(start, end, kind)`` of every keyword in ``text``, by start (module doc)."""
        lowered = text.lower()
        if len(lowered) != len(text):  # a character whose lower case is longer: keep offsets
            lowered = text
        longest_cjk, longest_words = self._limits
        out: list[tuple[int, int, str]] = []
        if longest_cjk:
            for run in _CJK_RUN.finditer(lowered):
                out.extend(self._cjk_spans(run.group(), run.start(), longest_cjk))
        if longest_words:
            out.extend(self._word_spans(_words(lowered), longest_words))
        return sorted(out)

    def _cjk_spans(self, run: str, offset: int, longest: int) -> list[tuple[int, int, str]]:
        found = longest_first(len(run), longest, lambda i, n: self._kinds.get(run[i : i + n]))
        return [(offset + i, offset + i + n, kind.value) for i, n, kind in found]

    def _word_spans(self, words: list[re.Match[str]], longest: int) -> list[tuple[int, int, str]]:
        def kind(i: int, n: int) -> KeywordKind | None:
            group = [w.group() for w in words[i : i + n]]
            found = self._kinds.get(" ".join(group))
            if found is None and n == 1 and len(group[0]) > 3 and group[0].endswith("s"):
                found = self._kinds.get(group[0][:-1])  # a plural of a one-word keyword
            return found

        found = longest_first(len(words), longest, kind)
        return [(words[i].start(), words[i + n - 1].end(), k.value) for i, n, k in found]

    # ------------------------------------------------------------------ files
    def lines(self) -> Iterable[str]:
        """The file's lines (module doc), keywords sorted by kind then text."""
        yield f"# lang: {self.lang}"
        yield HEADER
        for kind in KeywordKind:
            for key in sorted(k for k, v in self._kinds.items() if v is kind):
                yield f"{key}\t{kind.value}"

    def save(self, path: str | Path, comments: Iterable[str] = ()) -> Path:
        """Write the vocabulary as a keyword file, ``comments`` first (each as ``# ...``)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        head = [f"# {c}" for c in comments]
        path.write_text("\n".join([*head, *self.lines()]) + "\n", encoding="utf-8")
        return path


def read_keywords(path: str | Path, lang: str | None = None) -> KeywordVocabulary:
    """The vocabulary of a keyword file (module doc). ``lang`` overrides the file's
    ``# lang:`` comment; without either, ``"zh"`` when a keyword is CJK, else ``"en"``.

    Raises:
        InputFormatError: a missing header, a line without two fields, an unknown kind or a
            keyword given as both kinds (naming the file and line).
    """
    path = Path(path)
    if not path.is_file():
        raise InputFormatError(path, None, "keyword file not found (see 'termnorm kg keywords')")
    sites: set[str] = set()
    types: set[str] = set()
    declared: str | None = None
    header_seen = False
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            comment = line.lstrip("#").strip()
            if comment.lower().startswith("lang:"):
                declared = comment.split(":", 1)[1].strip()
            continue
        if not header_seen:
            if line.split("\t") != HEADER.split("\t"):
                raise InputFormatError(path, number, f"expected the header {HEADER!r}")
            header_seen = True
            continue
        fields = raw.rstrip("\n").split("\t")
        if len(fields) != 2 or not fields[0].strip():
            raise InputFormatError(path, number, "expected keyword<TAB>kind")
        try:
            kind = KeywordKind(fields[1].strip().lower())
        except ValueError:
            raise InputFormatError(
                path, number, f"unknown kind {fields[1]!r}: expected site or type"
            ) from None
        (sites if kind is KeywordKind.SITE else types).add(fields[0].strip())
    if not header_seen:
        raise InputFormatError(path, None, f"no header line {HEADER!r}")
    chosen = lang or declared or ("zh" if any(is_cjk(k) for k in sites | types) else "en")
    try:
        return KeywordVocabulary(frozenset(sites), frozenset(types), chosen)
    except ValueError as exc:
        raise InputFormatError(path, None, str(exc)) from None


def builtin_keywords_path(lang: str) -> Path:
    """Path of the shipped vocabulary for ``lang`` (``en`` diseases/phenotypes, ``zh``
    procedures); ``ValueError`` for another language."""
    try:
        name = BUILTIN_KEYWORDS[lang]
    except KeyError:
        known = ", ".join(sorted(BUILTIN_KEYWORDS))
        raise ValueError(
            f"no built-in keyword vocabulary for {lang!r} (known: {known}); build one with "
            "'termnorm kg keywords' and pass --keywords FILE"
        ) from None
    return Path(str(resources.files("termnorm.kg") / "data" / name))
