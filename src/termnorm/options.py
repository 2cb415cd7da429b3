"""Options: dataclass fields that document themselves, one vocabulary for every configuration.

A field declared with :func:`opt` carries its help text and how its command-line option is
declared, in ``metadata``: ``help``; ``flag`` (the option's names when not ``--field-name``,
booleans ``--field-name/--no-field-name``); ``aliases`` (further names); ``cli_required`` (the
command needs it, the Python API may pass it otherwise); ``exists`` (``"dir"``, ``"file"`` or
``"path"``: an existing one); ``min`` / ``max`` (the bounds of a number, inclusive: the CLI
refuses a value outside them, :func:`check_bounds` does for the Python API); ``envvar`` (an
environment variable the command line reads when the option is not given, e.g. a token kept
out of the shell history); ``metavar`` (the value's name in ``--help``). The KG loaders'
options, the training and KGE settings, the pipeline spec and the CLI option generator
(:mod:`termnorm.cli._config_options`) all read these fields.

:func:`coerce` turns a value given in its JSON or command-line form (``"ENG,FRE"``,
``"false"``, ``"m"``, ``"coder"``) into the field's type; :func:`options_from_dict` builds an
options dataclass from a dict, refusing unknown keys, and :func:`options_to_dict` writes it back.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable, Mapping
from enum import Enum
from pathlib import Path
from typing import Any, TypeVar

__all__ = [
    "check_bounds",
    "coerce",
    "flag_of",
    "opt",
    "options_from_dict",
    "options_to_dict",
]

T = TypeVar("T")

_TRUE = {"1", "true", "yes", "on", "y"}
_FALSE = {"0", "false", "no", "off", "n"}


def opt(
    default: Any,
    help: str,
    flag: str | None = None,
    *,
    aliases: tuple[str, ...] = (),
    cli_required: bool = False,
    exists: str | None = None,
    min: float | None = None,
    max: float | None = None,
    envvar: str | None = None,
    metavar: str | None = None,
) -> Any:
    """A dataclass field with default ``default``, help text ``help`` and its option's
    metadata (module doc). A mutable default is a ``TypeError``: use a tuple."""
    if isinstance(default, list | dict | set):
        raise TypeError("use a tuple or a frozen value as an option default")
    meta: dict[str, Any] = {"help": help, "flag": flag, "aliases": aliases}
    meta |= {"cli_required": cli_required}
    meta |= {"exists": exists, "min": min, "max": max, "envvar": envvar, "metavar": metavar}
    return dataclasses.field(default=default, metadata=meta)


def flag_of(name: str) -> str:
    """The option of field ``name`` (``--hard-share`` for ``hard_share``)."""
    return "--" + name.replace("_", "-")


def check_bounds(options: Any, label: Callable[[str], str] = flag_of) -> None:
    """``ValueError`` naming the field (``label(name)``, its option by default) for a value
    outside its field's ``min`` / ``max`` (``None`` values pass)."""
    for f in dataclasses.fields(options):
        value, low, high = getattr(options, f.name), f.metadata.get("min"), f.metadata.get("max")
        if value is None:
            continue
        if low is not None and value < low:
            raise ValueError(f"{label(f.name)} must be at least {low:g} (got {value})")
        if high is not None and value > high:
            raise ValueError(f"{label(f.name)} must be at most {high:g} (got {value})")


def coerce(name: str, value: Any, hint: Any) -> Any:
    """``value`` (a Python value, or its JSON or command-line form) as a field ``name`` of type
    ``hint``: ``X | None`` keeps ``None``; a bool from ``true/false``; a tuple from a list or a
    comma-separated string; paths and enums from strings; an enum as its value where a ``str``
    is expected. Numbers are left as given."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if value is None:
            return None
        return coerce(name, value, next(a for a in args if a is not type(None)))
    if hint is bool:
        text = str(value).strip().lower()
        if isinstance(value, bool) or text in _TRUE | _FALSE:
            return value if isinstance(value, bool) else text in _TRUE
        raise ValueError(f"option {name!r} expects true/false, got {value!r}")
    if origin is tuple:
        items = value.split(",") if isinstance(value, str) else list(value or ())
        if args and args[0] is str:
            return tuple(text for v in items if (text := str(v).strip()))
        return tuple(coerce(name, v, args[0]) for v in items)
    if hint is Path or (isinstance(hint, type) and issubclass(hint, Enum)):
        return hint(value)
    if hint is str:
        return value.value if isinstance(value, Enum) else str(value)
    return value


def options_from_dict(cls: type[T], values: Mapping[str, Any] | None, where: str) -> T:
    """Build the options dataclass ``cls`` from ``values`` (coerced to the fields' types);
    unknown keys raise ``ValueError`` naming ``where`` they were given (``"format 'tsv'"``)
    and the known ones."""
    values = dict(values or {})
    known = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(set(values) - known)
    if unknown:
        raise ValueError(
            f"unknown option(s) {', '.join(unknown)} for {where}; "
            f"known: {', '.join(sorted(known)) or '(none)'}"
        )
    hints = typing.get_type_hints(cls)
    return cls(**{k: coerce(k, v, hints[k]) for k, v in values.items()})


def options_to_dict(options: Any) -> dict[str, Any]:
    """JSON-ready view of an options dataclass (tuples as lists, paths and enums as strings)."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(options):
        value = getattr(options, f.name)
        if isinstance(value, tuple):
            value = list(value)
        elif isinstance(value, Path):
            value = str(value)
        elif isinstance(value, Enum):
            value = value.value
        out[f.name] = value
    return out
