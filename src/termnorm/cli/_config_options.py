"""Typer options generated from a configuration dataclass: one option per field.

Each field becomes ``--field-name`` (booleans ``--field-name/--no-field-name``) with the
field's default and the help text of its metadata (``help``); the metadata may also give the
option's names (``flag``), make the option required on the command line (``cli_required``)
or require an existing path (``exists``: ``"dir"``, ``"file"`` or ``"path"``), bound a number
(``min``, ``max``), give further names (``aliases``), read an environment variable
(``envvar``) and name the value in help (``metavar``); a field whose type is a dataclass
contributes its own fields. Enums become choices,
``X | None`` an optional ``X``, ``tuple[X, ...]`` a repeatable option. :func:`with_options`
gives a command function the signature typer reads, so that a default and its help text live
in the dataclass only.
"""

from __future__ import annotations

import dataclasses
import inspect
import types
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any, TypeVar, Union, get_args, get_origin, get_type_hints

import typer
from typer.core import TyperCommand

from termnorm.training.config.base import flag_of

T = TypeVar("T")


class PlainHelpCommand(TyperCommand):
    """A command whose ``--help`` is click's plain layout: long option names wrap onto their
    own line instead of being cut off, as rich's table does at 80 columns."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.rich_markup_mode = None


def option_names(field: dataclasses.Field[Any], kind: Any) -> str:
    """The option's names: the metadata's ``flag``, else ``--name`` (``--name/--no-name``)."""
    flag: str | None = field.metadata.get("flag")
    if flag:
        return flag
    name = flag_of(field.name)
    return f"{name}/--no-{name[2:]}" if kind is bool else name


def cli_type(kind: Any) -> Any:
    """The annotation typer reads for a field of type ``kind``."""
    if get_origin(kind) in (Union, types.UnionType):  # X | None
        (inner,) = (arg for arg in get_args(kind) if arg is not type(None))
        return cli_type(inner) | None
    if get_origin(kind) is tuple:  # tuple[X, ...]: a repeatable option
        return list[get_args(kind)[0]]  # type: ignore[misc]
    return kind


def config_options(
    config_cls: type[Any], exclude: Collection[str] = (), help: Mapping[str, str] | None = None
) -> list[inspect.Parameter]:
    """One keyword parameter (a ``typer.Option`` default) per field of ``config_cls`` but those
    named in ``exclude`` (``help`` overriding a field's help text); a field that is itself a
    dataclass (a section of settings) gives one per field of its own that ``config_cls``
    does not also have."""
    texts = help or {}
    kinds = get_type_hints(config_cls)
    names = {field.name for field in dataclasses.fields(config_cls)}
    params = []
    for field in dataclasses.fields(config_cls):
        if field.name in exclude:
            continue
        meta = field.metadata
        kind = kinds[field.name]
        if dataclasses.is_dataclass(kind):
            params += config_options(kind, {*exclude, *names}, help)  # type: ignore[arg-type]
            continue
        if meta.get("cli_required"):
            default: Any = ...
        elif field.default_factory is not dataclasses.MISSING:
            default = field.default_factory()
        else:
            default = field.default
        if isinstance(default, tuple):
            default = list(default)
        exists = meta.get("exists")
        option = typer.Option(
            default,
            option_names(field, kind),
            *meta.get("aliases", ()),
            help=texts.get(field.name, meta.get("help", "")),
            exists=exists is not None,
            file_okay=exists != "dir",
            dir_okay=exists != "file",
            min=meta.get("min"),
            max=meta.get("max"),
            envvar=meta.get("envvar"),
            metavar=meta.get("metavar"),
        )
        params.append(
            inspect.Parameter(
                field.name,
                inspect.Parameter.KEYWORD_ONLY,
                default=option,
                annotation=cli_type(kind),
            )
        )
    return params


def with_options(
    func: Callable[..., Any],
    first: Sequence[inspect.Parameter],
    options: Sequence[inspect.Parameter],
) -> Callable[..., Any]:
    """``func`` (taking ``**kwargs``) with the signature ``(*first, *, *options)`` typer reads."""
    params = [*first, *options]
    func.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    func.__annotations__ = {p.name: p.annotation for p in params}
    return func


def with_config_options(
    *config_classes: type[Any], exclude: Collection[str] = (), help: Mapping[str, str] | None = None
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorate a command function (its own parameters, then ``**fields``) so that typer reads
    its own parameters followed by the :func:`config_options` of ``config_classes``."""

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        own = [
            p for p in inspect.signature(func).parameters.values() if p.kind is not p.VAR_KEYWORD
        ]
        options = [p for cls in config_classes for p in config_options(cls, exclude, help)]
        return with_options(func, own, options)

    return decorate


def options_of(config_cls: type[T], fields: Mapping[str, Any]) -> T:
    """``config_cls`` built from the values of its own fields in ``fields`` (the ``**fields``
    of a command decorated with :func:`with_config_options`, which may hold other classes'
    fields too); a repeatable option's list becomes the field's tuple."""
    values = {
        field.name: tuple(value) if isinstance(value, list) else value
        for field in dataclasses.fields(config_cls)  # type: ignore[arg-type]
        if field.name in fields
        for value in (fields[field.name],)
    }
    return config_cls(**values)
