"""Validation of query texts, shared by the normalizer, batch files, the API and the CLI.

A query is accepted when it is a ``str`` that is not empty or whitespace-only after
stripping, is at most ``max_chars`` characters long and is valid Unicode (no lone surrogate,
which JSON's ``\ud800`` escapes can give: the tokenizer refuses it, and no UTF-8 output can
hold it); it is used stripped. Anything else
gets a one-line message saying what is wrong and what to do, raised as :class:`QueryError`
(or, for files, written into the row's ``error`` column).
"""

from __future__ import annotations

import math
import re

from termnorm.errors import QueryError

__all__ = [
    "DEFAULT_MAX_CHARS",
    "QueryError",
    "lone_surrogate_problem",
    "query_problem",
    "validate_query",
]

DEFAULT_MAX_CHARS = 1000


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def lone_surrogate_problem(text: str) -> str | None:
    """Where ``text`` holds its first lone surrogate (``"not valid Unicode text: a lone
    surrogate U+D800 at character 7; give UTF-8 text"``), or ``None`` when it holds none."""
    found = _LONE_SURROGATE.search(text)
    if found is None:
        return None
    return (
        f"not valid Unicode text: a lone surrogate U+{ord(found.group()):04X} at character "
        f"{found.start()}; give UTF-8 text"
    )


def _is_missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def query_problem(value: object, max_chars: int = DEFAULT_MAX_CHARS) -> str | None:
    """What is wrong with ``value`` as a query, or ``None`` when it is usable."""
    if _is_missing(value):
        return "empty input: no text given"
    if isinstance(value, bytes | bytearray):
        return "not text: got bytes: decode it first, e.g. value.decode('utf-8')"
    if not isinstance(value, str):
        shown = repr(value)
        shown = shown if len(shown) <= 40 else shown[:37] + "..."
        return f"not text: got {type(value).__name__} {shown}; give a term as a string"
    text = value.strip()
    if not value:
        return "empty input: give a term to normalize"
    if not text:
        return "whitespace-only input: give a term to normalize"
    if len(text) > max_chars:
        return (
            f"input too long: {len(text)} characters, the limit is {max_chars}; "
            "shorten it or raise the limit (max_chars= in termnorm.normalize, --max-chars "
            "in 'termnorm normalize' / 'termnorm serve')"
        )
    return lone_surrogate_problem(text)


def validate_query(value: object, max_chars: int = DEFAULT_MAX_CHARS) -> str:
    """``value`` stripped, or :class:`QueryError` explaining why it is not a usable query."""
    problem = query_problem(value, max_chars)
    if problem is not None:
        raise QueryError(problem)
    return str(value).strip()
