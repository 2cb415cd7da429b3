"""Loader options: one frozen dataclass per source format, built from a plain dict.

Each field documents itself in ``metadata["help"]``. Values may be given as Python values or
as strings (from the command line): ``"ENG,FRE"`` becomes a tuple, ``"false"`` a bool.
Unknown keys are an error that lists the known ones.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

_TRUE = {"1", "true", "yes", "on", "y"}
_FALSE = {"0", "false", "no", "off", "n"}


def opt(default: Any, help: str) -> Any:
    """A dataclass field with a default and a help text."""
    if isinstance(default, list | dict | set):  # pragma: no cover - guard for future fields
        raise TypeError("use a tuple or a frozen value as an option default")
    return dataclasses.field(default=default, metadata={"help": help})


def _coerce(name: str, value: Any, hint: Any) -> Any:
    """Convert ``value`` (possibly a CLI string) to the annotated type ``hint``."""
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if value is None:
            return None
        inner = [a for a in args if a is not type(None)]
        return _coerce(name, value, inner[0])
    if hint is bool:
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in _TRUE | _FALSE:
            return text in _TRUE
        raise ValueError(f"option {name!r} expects true/false, got {value!r}")
    if origin is tuple:
        items = value.split(",") if isinstance(value, str) else list(value)
        return tuple(str(v).strip() for v in items if str(v).strip())
    if hint is Path:
        return Path(value)
    if hint is str:
        return str(value)
    return value


def options_from_dict(cls: type[T], values: Mapping[str, Any] | None, where: str) -> T:
    """Build the options dataclass ``cls`` from ``values``; unknown keys raise ``ValueError``
    naming ``where`` they were given (``"format 'tsv'"``) and the known ones."""
    values = dict(values or {})
    known = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(set(values) - known)
    if unknown:
        raise ValueError(
            f"unknown option(s) {', '.join(unknown)} for {where}; "
            f"known: {', '.join(sorted(known)) or '(none)'}"
        )
    hints = typing.get_type_hints(cls)
    kwargs = {k: _coerce(k, v, hints[k]) for k, v in values.items()}
    return cls(**kwargs)


def options_to_dict(options: Any) -> dict[str, Any]:
    """JSON-ready view of an options dataclass (tuples as lists, paths as strings)."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(options):
        value = getattr(options, f.name)
        if isinstance(value, tuple):
            value = list(value)
        elif isinstance(value, Path):
            value = str(value)
        out[f.name] = value
    return out
