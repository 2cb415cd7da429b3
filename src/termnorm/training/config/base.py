"""Settings dataclasses whose fields are ``termnorm train`` options (import-free: the CLI reads
them at start-up to generate its flags).

Fields are declared with :func:`termnorm.options.opt` (help text, option names, ``min``
bounds). :class:`Settings` turns values given in their JSON forms (``"coder"``, ``"m"``) into
the field's type, writes them back (:meth:`Settings.to_dict`, sections flattened) and checks the
fields' bounds (:meth:`Settings.check_bounds`). A :class:`Section` is the settings one
objective or batch source reads, under its ``name`` in ``TrainConfig``.
"""

from __future__ import annotations

import dataclasses
from enum import Enum
from pathlib import Path
from typing import Any, ClassVar, get_type_hints

from termnorm.options import check_bounds, coerce, flag_of, opt

__all__ = ["Section", "Settings", "check_share", "flag_of", "opt"]


def check_share(name: str, value: float) -> None:
    """``ValueError`` naming the option unless 0 <= value <= 1."""
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{flag_of(name)} must be in [0, 1] (got {value})")


class Settings:
    """Base of the settings dataclasses (module doc)."""

    def __post_init__(self) -> None:
        """Values given in their JSON forms (``loss="coder"``, ``out="m"``) become typed."""
        kinds = get_type_hints(type(self))
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            setattr(self, f.name, coerce(f.name, getattr(self, f.name), kinds[f.name]))

    def check_bounds(self) -> None:
        """``ValueError`` naming the option for a value outside its field's bounds."""
        check_bounds(self)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready flat dict (paths and enums as strings, sections' fields inline)."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            if isinstance(value, Enum):
                out[f.name] = value.value
            else:
                out[f.name] = str(value) if isinstance(value, Path) else value
        return out


class Section(Settings):
    """The settings one objective or batch source reads (``TrainConfig.<name>``)."""

    name: ClassVar[str]
    """The section's attribute in ``TrainConfig`` (``"sampler"``)."""

    def validate(self, run: Any) -> None:
        """Fail fast on impossible settings, naming the flag (``run``: the shared settings,
        for rules that depend on the loss or the batches); here the bounds only."""
        self.check_bounds()
