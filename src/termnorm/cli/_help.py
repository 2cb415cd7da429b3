"""Help texts made safe for Typer's Rich help: Rich reads ``[word]`` as markup and drops it
(``termnorm[onnx]`` showed as ``termnorm``), so help shared with the library is escaped here."""

from __future__ import annotations

from rich.markup import escape

from termnorm.encoders.runtime import RUNTIME_HELP as _RUNTIME_HELP

__all__ = ["RUNTIME_HELP", "markup_safe"]


def markup_safe(text: str) -> str:
    """``text`` with every ``[`` that Rich would read as a markup tag escaped."""
    return escape(text)


RUNTIME_HELP = markup_safe(_RUNTIME_HELP)
"""``--runtime``'s help (:data:`termnorm.encoders.runtime.RUNTIME_HELP`), escaped."""
