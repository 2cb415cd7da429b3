"""The ``--overwrite`` option of every command that writes a folder (one declaration).

What it allows is :func:`termnorm._artifacts.prepare_output`'s rule: without it an existing
non-empty ``--out`` is refused; with it that folder is replaced atomically once the work is
done. An ``--out`` that is, holds or lies inside one of the command's inputs is refused
either way.
"""

from __future__ import annotations

from typing import Any

import typer

__all__ = ["OVERWRITE_HELP", "overwrite_option"]

OVERWRITE_HELP = (
    "Replace a non-empty --out (its contents are deleted once the new folder is written). "
    "An --out that is, holds or lies inside an input is refused even so."
)


def overwrite_option() -> Any:
    """``--overwrite`` (default off) as a typer option."""
    return typer.Option(False, "--overwrite", help=OVERWRITE_HELP)
