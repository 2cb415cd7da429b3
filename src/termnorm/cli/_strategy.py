"""The search options of ``termnorm normalize`` and ``termnorm eval normalize``, generated
from :class:`~termnorm.search.spec.PipelineSpec` (one option per field: its default and help
live in the spec only, as ``train``'s live in ``TrainConfig``).

:func:`with_spec_options` adds them to a command function (which takes them as
``**spec``), :func:`spec_from_options` turns them back into the spec (a refusal becomes a
usage error naming the option). Commands that take some of these settings outside a spec
(``map``, ``serve``) reuse their help texts (``SPEC_HELP``). Registering stays cheap: the
spec imports nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import typer

from termnorm.cli._config_options import with_config_options
from termnorm.cli._options import RUNTIME_HELP
from termnorm.search.spec import PipelineSpec


def with_spec_options(
    exclude: Iterable[str] = (),
    help: Mapping[str, str] | None = None,
    settings: Iterable[type[Any]] = (),
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorate a command function (its own parameters, then ``**spec``) so that typer
    reads its parameters followed by the spec's options, then those of the ``settings``
    dataclasses (less ``exclude``; ``help`` overriding a field's help text)."""
    texts = {"runtime": RUNTIME_HELP, **(help or {})}
    return with_config_options(PipelineSpec, *settings, exclude=tuple(exclude), help=texts)


def spec_from_options(values: Mapping[str, Any], **fixed: Any) -> PipelineSpec:
    """The spec of a command's spec options (plus ``fixed`` fields); a refusal is a
    :class:`typer.BadParameter` with the spec's message (it names the option)."""
    try:
        return PipelineSpec(**{**values, **fixed})
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None


def synonym_notice(name: str, report: Any) -> None:
    """One stderr line per synonym file: what was added, what dropped and why."""
    dropped = ", ".join(f"{n} {why}" for why, n in sorted(report.dropped.items()))
    typer.echo(
        f"domain synonyms from {name}: {report.kept} added ({report.encoded_texts} "
        f"texts encoded)" + (f"; dropped: {dropped}" if dropped else ""),
        err=True,
    )
