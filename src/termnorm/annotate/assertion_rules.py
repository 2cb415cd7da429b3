"""ConText/NegEx-style trigger rules: what a phrase asserts and how far its scope runs.

A rule file is a TSV with the header ``literal category direction max_scope`` (``#`` lines
are comments):

- ``literal``: the trigger phrase; matched case-insensitively, on word boundaries, with any
  run of white space between its words.
- ``category``: ``NEGATED_EXISTENCE``, ``HYPOTHETICAL``, ``HISTORICAL`` or ``FAMILY`` flag
  the spans in the trigger's scope; ``TERMINATE`` ends every scope that reaches it;
  ``PSEUDO`` asserts nothing and hides the triggers inside it ("no increase").
- ``direction``: ``FORWARD``, ``BACKWARD`` or ``BIDIRECTIONAL``; empty for ``TERMINATE`` and
  ``PSEUDO``.
- ``max_scope``: at most this many words in scope on each side; empty for the whole
  sentence.

The shipped rules are ``termnorm/annotate/data/context_rules.tsv`` (English) and
``context_rules_LANG.tsv`` for French, German, Spanish and Dutch
(:meth:`AssertionRules.for_language`; :mod:`termnorm.annotate.languages` chooses one per
document). An apostrophe in a literal matches a straight or a typographic one, and a literal
that ends with one ("pas d'") needs no space before the next word. One literal has
one rule: :meth:`AssertionRules.extend` lets a user's file add literals and replace the
shipped rule of a literal it repeats.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import Enum
from importlib import resources
from pathlib import Path
from typing import TypeVar

__all__ = [
    "AssertionRule",
    "AssertionRules",
    "Category",
    "Direction",
    "default_rules_path",
    "rules_path",
]

HEADER = ("literal", "category", "direction", "max_scope")


class Category(str, Enum):
    """What a trigger says about the spans in its scope (the ConText categories we flag)."""

    NEGATED_EXISTENCE = "NEGATED_EXISTENCE"
    HYPOTHETICAL = "HYPOTHETICAL"
    HISTORICAL = "HISTORICAL"
    FAMILY = "FAMILY"
    TERMINATE = "TERMINATE"
    PSEUDO = "PSEUDO"


class Direction(str, Enum):
    """Which side of the trigger its scope lies on."""

    FORWARD = "FORWARD"
    BACKWARD = "BACKWARD"
    BIDIRECTIONAL = "BIDIRECTIONAL"


_E = TypeVar("_E", Category, Direction)

# categories without a scope of their own
_SCOPELESS = (Category.TERMINATE, Category.PSEUDO)


class RuleLanguage(str, Enum):
    """A language with shipped assertion rules (ISO 639-1 code)."""

    EN = "en"
    FR = "fr"
    DE = "de"
    ES = "es"
    NL = "nl"


def literal_key(literal: str) -> str:
    """The form a literal is looked up by: lower case, single spaces, straight apostrophes."""
    return " ".join(literal.lower().replace("\u2019", "'").split())


@dataclass(frozen=True)
class AssertionRule:
    """One trigger phrase: ``direction`` is ``None`` exactly for TERMINATE and PSEUDO;
    ``max_scope`` (words, > 0) is ``None`` for a scope up to the sentence edge."""

    literal: str
    category: Category
    direction: Direction | None = None
    max_scope: int | None = None

    def __post_init__(self) -> None:
        if not literal_key(self.literal):
            raise ValueError("an assertion rule needs a non-empty literal")
        scopeless = self.category in _SCOPELESS
        if scopeless and (self.direction is not None or self.max_scope is not None):
            raise ValueError(
                f"rule {self.literal!r}: a {self.category.value} rule has no direction or "
                "max_scope; leave both empty"
            )
        if not scopeless and self.direction is None:
            choices = ", ".join(d.value for d in Direction)
            raise ValueError(
                f"rule {self.literal!r}: a {self.category.value} rule needs a direction ({choices})"
            )
        if self.max_scope is not None and self.max_scope < 1:
            raise ValueError(
                f"rule {self.literal!r}: max_scope must be a positive number of words or "
                f"empty, got {self.max_scope}"
            )


@dataclass(frozen=True)
class AssertionRules:
    """A set of trigger rules, one per literal (compared in lower case, single-spaced)."""

    rules: tuple[AssertionRule, ...]
    _by_key: dict[str, AssertionRule] = field(init=False, repr=False, compare=False)
    _pattern: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        by_key: dict[str, AssertionRule] = {}
        for rule in self.rules:
            key = literal_key(rule.literal)
            if key in by_key:
                raise ValueError(
                    f"two assertion rules for the literal {key!r}; keep one (use "
                    "AssertionRules.extend to replace a rule)"
                )
            by_key[key] = rule
        object.__setattr__(self, "_by_key", by_key)
        object.__setattr__(self, "_pattern", _compile(by_key))

    @classmethod
    def default(cls) -> AssertionRules:
        """The shipped English rules (``termnorm/annotate/data/context_rules.tsv``), read
        once per process (the rules are immutable)."""
        return _language_rules(RuleLanguage.EN)

    @classmethod
    def for_language(cls, language: RuleLanguage | str) -> AssertionRules:
        """The shipped rules of ``language`` (a :class:`RuleLanguage` or its code), read once
        per process; ``ValueError`` listing the languages that have rules."""
        return _language_rules(_rule_language(language))

    @classmethod
    def from_file(cls, path: Path | str) -> AssertionRules:
        """The rules of a TSV file alone (see the module docstring for its columns);
        ``ValueError`` naming the file and line for a bad row."""
        return cls(tuple(read_rules(Path(path))))

    def extend(self, other: AssertionRules | Iterable[AssertionRule]) -> AssertionRules:
        """These rules plus ``other``'s; where both have a literal, ``other``'s rule wins."""
        extra = other.rules if isinstance(other, AssertionRules) else tuple(other)
        merged = dict(self._by_key)
        merged.update((literal_key(rule.literal), rule) for rule in extra)
        return AssertionRules(tuple(merged.values()))

    def finditer(self, text: str, start: int, end: int) -> list[tuple[int, int, AssertionRule]]:
        """The triggers in ``text[start:end]`` as ``(start, end, rule)`` with offsets into
        ``text``, left to right, the longest where two start at the same place and
        none overlapping (leftmost-longest, as NegEx)."""
        return [
            (match.start(), match.end(), self._by_key[literal_key(match.group())])
            for match in self._pattern.finditer(text, start, end)
        ]


@functools.cache
def _language_rules(language: RuleLanguage) -> AssertionRules:
    """The shipped rules of ``language``, read on first use."""
    return AssertionRules.from_file(rules_path(language))


def _rule_language(language: RuleLanguage | str) -> RuleLanguage:
    """``language`` as a :class:`RuleLanguage`; ``ValueError`` listing the known ones."""
    try:
        return RuleLanguage(language)
    except ValueError:
        known = ", ".join(member.value for member in RuleLanguage)
        raise ValueError(
            f"no shipped assertion rules for the language {language!r} (known: {known})"
        ) from None


def default_rules_path() -> Path:
    """Path of the shipped English rule file."""
    return rules_path(RuleLanguage.EN)


def rules_path(language: RuleLanguage | str) -> Path:
    """Path of the shipped rule file of ``language`` (``context_rules.tsv`` for English,
    ``context_rules_LANG.tsv`` for the others)."""
    language = _rule_language(language)
    name = (
        "context_rules.tsv"
        if language is RuleLanguage.EN
        else f"context_rules_{language.value}.tsv"
    )
    return Path(str(resources.files("termnorm.annotate") / "data" / name))


_Trie = dict[str, "_Trie"]  # character -> the literals that go on with it; "" ends one


def _compile(by_key: dict[str, AssertionRule]) -> re.Pattern[str]:
    """Every literal in one trie-shaped pattern (:func:`_trie`): at each place the longest
    literal that matches, word boundaries at word-character edges only (so ``;`` and ``r/o``
    match next to a word). The matches of a plain alternation of the literals, longest first,
    found ~40x faster (only the literals that go on with the next character are tried)."""
    trie: _Trie = {}
    for key in by_key:
        node = trie
        for char in key:
            node = node.setdefault(char, {})
        node[""] = {}
    word = {c: child for c, child in trie.items() if re.match(r"\w", c)}
    other = {c: child for c, child in trie.items() if c not in word}
    groups = ([rf"(?<!\w){_trie(word)}"] if word else []) + ([_trie(other)] if other else [])
    return re.compile("|".join(groups) or r"(?!)", re.IGNORECASE)


def _trie(node: _Trie, last: str = "") -> str:
    """The pattern of the literals below ``node`` (``last``: the character that led there),
    longer ones first; a space matches any run of white space, an apostrophe a straight or a
    typographic one."""
    unit = {" ": r"\s+", "'": "['\u2019]"}
    alternatives = [
        unit.get(c, re.escape(c)) + _trie(child, c) for c, child in sorted(node.items()) if c
    ]
    if "" in node:  # a literal ends at ``last``: after every longer one
        alternatives.append(r"(?!\w)" if re.match(r"\w", last) else "")
    return alternatives[0] if len(alternatives) == 1 else "(?:" + "|".join(alternatives) + ")"


def read_rules(path: Path) -> list[AssertionRule]:
    """The rows of a rule TSV; ``ValueError`` naming ``path`` and the line for a bad one."""
    if not path.is_file():
        raise FileNotFoundError(
            f"no assertion rule file at {path}; pass a TSV with the columns {' '.join(HEADER)}"
        )
    rows = [
        (number, line.rstrip("\r\n"))
        for number, line in enumerate(path.read_text(encoding="utf-8-sig").splitlines(True), 1)
        if line.strip() and not line.startswith("#")
    ]
    if not rows or tuple(rows[0][1].split("\t")) != HEADER:
        raise ValueError(
            f"{path}: the first row must be the header {'<TAB>'.join(HEADER)} (tab-separated)"
        )
    rules = []
    seen: dict[str, int] = {}
    for number, line in rows[1:]:
        try:
            rule = _parse_row(line)
        except ValueError as exc:
            raise ValueError(f"{path}:{number}: {exc}") from None
        key = literal_key(rule.literal)
        if key in seen:
            raise ValueError(
                f"{path}:{number}: the literal {key!r} already has a rule on line "
                f"{seen[key]}; keep one"
            )
        seen[key] = number
        rules.append(rule)
    return rules


def _parse_row(line: str) -> AssertionRule:
    """One tab-separated row as a rule."""
    cells = line.split("\t")
    if len(cells) != len(HEADER):
        raise ValueError(f"expected {len(HEADER)} tab-separated cells, got {len(cells)}")
    literal, category, direction, max_scope = (cell.strip() for cell in cells)
    return AssertionRule(
        literal=literal,
        category=_enum(Category, category, "category"),
        direction=_enum(Direction, direction, "direction") if direction else None,
        max_scope=_positive_int(max_scope) if max_scope else None,
    )


def _enum(kind: type[_E], value: str, column: str) -> _E:
    """``value`` (any case) as a member of ``kind``; ``ValueError`` listing the choices."""
    try:
        return kind(value.upper())
    except ValueError:
        choices = ", ".join(member.value for member in kind)
        raise ValueError(f"unknown {column} {value!r} (choose from {choices})") from None


def _positive_int(value: str) -> int:
    """``value`` as a whole number; the rule itself checks that it is positive."""
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"max_scope {value!r} is not a whole number of words") from None
