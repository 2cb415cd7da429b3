"""Text a project may store: the same on SQLite and PostgreSQL.

PostgreSQL refuses the NUL character (U+0000) in text and JSON columns, where SQLite keeps
it: a project that accepted one on SQLite could not move to PostgreSQL, and the same
request would succeed on one database and fail on the other. So no project stores it, on
either database: comments, reviewers' names, and the codes, texts and context columns of a
source list holding one are refused, saying where.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["NUL", "has_nul", "storable_problem"]

NUL = "\x00"


def has_nul(value: Any) -> bool:
    """Whether ``value`` (a string, or a mapping / list of them, as JSON holds) has a NUL."""
    if isinstance(value, str):
        return NUL in value
    if isinstance(value, Mapping):
        return any(has_nul(k) or has_nul(v) for k, v in value.items())
    if isinstance(value, Sequence) and not isinstance(value, bytes | bytearray):
        return any(has_nul(v) for v in value)
    return False


def storable_problem(text: str | None, what: str) -> str | None:
    """Why ``text`` (``what``, for the message) cannot be stored, or ``None`` when it can."""
    if text is None or NUL not in text:
        return None
    return (
        f"{what} holds a NUL character (U+0000) at character {text.index(NUL)}: a project "
        "stores no NUL (PostgreSQL cannot), nothing written; remove it and send it again"
    )
