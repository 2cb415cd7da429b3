"""Flags generated from a registry's options classes: the source flags of ``termnorm kg
build`` (:data:`termnorm.kg.formats.FORMATS`) and the options of ``termnorm map export``
(:data:`termnorm.projects.exports.EXPORTERS`).

Every field of every entry's options class becomes a flag: the field's ``flag`` metadata, else ``--field-name`` (booleans ``--x/--no-x``). Fields of
several formats that share a flag share one option (``--lang`` sets ``langs`` of umls,
icd10who, icd9procs and gnuhealth); their help lists each format's text and default. A flag
left out sets nothing, so a source keeps its own default and ``#key=value`` options; a flag
given applies to every source whose format has it, and one that applies to none is an error.

Adding a field to an options class, or an entry to the registry, adds its flag with no other
edit.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any, get_type_hints

import typer

from termnorm.cli._config_options import cli_type, option_names
from termnorm.kg.formats import FORMATS
from termnorm.registry import Registry


@dataclass(frozen=True, eq=False)  # hashed by identity: a key of flag_values
class SourceFlag:
    """One flag: its names, the parameter typer passes, the field type, and per format the
    field it sets with that field's help text and default."""

    names: str
    param: str
    kind: Any
    fields: dict[str, str]  # format name: field name
    helps: dict[str, str]

    def typed(self, value: Any) -> str:
        """The name a user typed to give ``value`` (``--no-annotations`` for ``False``)."""
        on, _, off = self.names.partition("/")
        return off if value is False and off else on


def _default_text(value: Any) -> str:
    """A field default as help text ('' where there is nothing to say)."""
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, tuple):  # an empty one: the help text says what it means
        return ",".join(str(v) for v in value)
    if isinstance(value, Enum):
        return str(value.value)
    return "" if value in (None, "") else str(value)


def _field_help(field: dataclasses.Field[Any]) -> str:
    """The field's help text followed by its default."""
    text = str(field.metadata.get("help", "")).rstrip()
    default = _default_text(field.default)
    return f"{text} Default: {default}." if default else text


def source_flags(registry: Registry[Any] = FORMATS) -> list[SourceFlag]:
    """The flags of every entry's options fields, in the order entries and fields are declared.
    ``TypeError`` when two entries give one flag fields of different types, or two flags
    would take one parameter name."""
    flags: dict[str, SourceFlag] = {}
    for entry in registry:
        fmt, cls = entry.name, entry.options
        if cls is None:
            continue
        hints = get_type_hints(cls)
        for field in dataclasses.fields(cls):
            kind = hints[field.name]
            names = option_names(field, kind)
            known = flags.get(names)
            if known is None:
                param = names.split("/")[0].removeprefix("--").replace("-", "_")
                clash = next((f.names for f in flags.values() if f.param == param), None)
                if clash is not None:
                    raise TypeError(f"{names} and {clash} would both be parameter {param!r}")
                known = flags[names] = SourceFlag(names, param, kind, {}, {})
            elif known.kind != kind:
                raise TypeError(f"{names} sets fields of types {known.kind} and {kind}")
            known.fields[fmt] = field.name
            known.helps[fmt] = _field_help(field)
    return list(flags.values())


def _help(flag: SourceFlag) -> str:
    """Each format's help text, formats with the same text named together (``obo/hpo: ...``)."""
    by_text: dict[str, list[str]] = {}
    for fmt, text in flag.helps.items():
        by_text.setdefault(text, []).append(fmt)
    return " ".join(f"{'/'.join(formats)}: {text}" for text, formats in by_text.items())


def source_flag_params(flags: list[SourceFlag]) -> list[inspect.Parameter]:
    """One keyword parameter per flag, ``None`` when the flag is left out; tuple fields are
    repeatable and take comma-separated values."""
    return [
        inspect.Parameter(
            flag.param,
            inspect.Parameter.KEYWORD_ONLY,
            # choices as FhirVersion's own parsing (and '#fhir_version=r4b') take them
            default=typer.Option(None, flag.names, help=_help(flag), case_sensitive=False),
            annotation=cli_type(flag.kind) | None,
        )
        for flag in flags
    ]


def flag_values(flags: list[SourceFlag], given: Mapping[str, Any]) -> dict[SourceFlag, Any]:
    """The flags given on the command line (``given``: parameter name to value) with their
    values, comma-separated items of repeatable flags split."""
    out = {}
    for flag in flags:
        value = given.get(flag.param)
        if isinstance(value, list):
            value = [v.strip() for item in value for v in str(item).split(",") if v.strip()]
            value = value or None
        if value is not None:
            out[flag] = value
    return out


def options_for(name: str, given: Mapping[SourceFlag, Any]) -> dict[str, Any]:
    """The options of entry ``name`` that the flags ``given`` (flag: value) set, by field.

    Raises:
        ValueError: a flag given that ``name`` does not take, named as the user typed it.
    """
    unused = sorted(flag.typed(value) for flag, value in given.items() if name not in flag.fields)
    if unused:
        raise ValueError(f"{', '.join(unused)} does not apply to --format {name}")
    return {flag.fields[name]: value for flag, value in given.items()}
