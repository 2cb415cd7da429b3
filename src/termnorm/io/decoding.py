"""How text files are decoded, in a module that imports nothing (the CLI reads it while
registering its commands)."""

from __future__ import annotations

from enum import Enum

__all__ = ["DEFAULT_ENCODING", "DecodeErrors"]

DEFAULT_ENCODING = "utf-8-sig"
"""UTF-8, with a leading byte-order mark skipped."""


class DecodeErrors(str, Enum):
    """What to do with bytes a text file's encoding cannot decode: ``strict`` stops at their
    file:line; ``replace`` keeps the row with U+FFFD in their place."""

    STRICT = "strict"
    REPLACE = "replace"
