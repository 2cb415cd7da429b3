"""Settings dataclasses whose fields are ``termnorm train`` options (import-free: the CLI reads
them at start-up to generate its flags).

A field declared with :func:`opt` carries its help text and how its option is declared;
:class:`Settings` turns values given in their JSON forms (``"coder"``, ``"m"``) into the
field's type, writes them back (:meth:`Settings.to_dict`, sections flattened) and checks the
fields' lower bounds (:meth:`Settings.check_bounds`).
"""

from __future__ import annotations

import dataclasses
import types
from enum import Enum
from pathlib import Path
from typing import Any, Union, get_args, get_origin, get_type_hints

__all__ = ["Section", "Settings", "check_share", "flag_of", "opt"]


def opt(default: Any, text: str, flag: str | None = None, **option: Any) -> Any:
    """A field with default ``default``, help text ``text`` and its option's metadata.

    Args:
        flag: the option's names when they are not the default ``--field-name`` (booleans:
            ``--field-name/--no-field-name``).
        option: ``cli_required=True`` (the command needs the option; the Python API may pass
            the value otherwise), ``exists`` (``"dir"``: an existing folder, ``"file"``, or
            ``"path"``: either), ``aliases`` (further names: ``--objective`` for ``--loss``),
            ``at_least`` (the smallest valid value, :meth:`Settings.check_bounds`).
    """
    return dataclasses.field(default=default, metadata={"help": text, "flag": flag, **option})


def flag_of(name: str) -> str:
    """The option of field ``name`` (``--hard-share`` for ``hard_share``)."""
    return "--" + name.replace("_", "-")


def check_share(name: str, value: float) -> None:
    """``ValueError`` naming the option unless 0 <= value <= 1."""
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{flag_of(name)} must be in [0, 1] (got {value})")


class Settings:
    """Base of the settings dataclasses (module doc)."""

    def __post_init__(self) -> None:
        """Values given in their JSON forms (``loss="coder"``, ``out="m"``) become typed."""
        for name, kind in get_type_hints(type(self)).items():
            setattr(self, name, _coerce(kind, getattr(self, name)))

    def check_bounds(self) -> None:
        """``ValueError`` naming the option for a value under its field's ``at_least``."""
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            low, value = f.metadata.get("at_least"), getattr(self, f.name)
            if low is not None and value < low:
                raise ValueError(f"{flag_of(f.name)} must be at least {low:g} (got {value})")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready flat dict (paths and enums as strings, sections' fields inline)."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            if isinstance(value, Settings):
                out.update(value.to_dict())
            elif isinstance(value, Enum):
                out[f.name] = value.value
            else:
                out[f.name] = str(value) if isinstance(value, Path) else value
        return out


def _coerce(kind: Any, value: Any) -> Any:
    """``value`` as a field of type ``kind``: paths, enums and tuples from their JSON forms."""
    if get_origin(kind) in (Union, types.UnionType):  # X | None
        if value is None:
            return None
        kind = next(arg for arg in get_args(kind) if arg is not type(None))
    if get_origin(kind) is tuple:  # tuple[str, ...]
        return tuple(_coerce(get_args(kind)[0], item) for item in value or ())
    if kind is Path or (isinstance(kind, type) and issubclass(kind, Enum)):
        return kind(value)
    if kind is str:
        return value.value if isinstance(value, Enum) else str(value)
    return value


class Section(Settings):
    """The settings one objective or batch source reads (a field of ``TrainConfig``)."""

    def validate(self, run: Any) -> None:
        """Fail fast on impossible settings, naming the flag (``run``: the shared settings,
        for rules that depend on the loss or the batches); here the lower bounds only."""
        self.check_bounds()
