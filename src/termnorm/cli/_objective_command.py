"""``termnorm train``'s command: its options follow the objective that ``--loss`` names.

Click builds a command's options before it parses; this command reads ``--loss`` (or
``--objective``, or the ``loss`` of a ``--config`` file) from the words first and then takes its
options from :data:`termnorm.training.objectives.OBJECTIVES`, so that an objective registered
at run time brings its own options:

* every option of every objective is accepted (shared scripts and ``--config`` files keep
  working whatever the objective); a name the registry does not know is refused, listing the
  known ones;
* ``termnorm train --help`` lists the shared options and a line on ``--loss NAME --help``;
* ``termnorm train --loss NAME --help`` lists the shared options NAME reads and NAME's own,
  the runtime ones (those :data:`~termnorm.training.config.RUNTIME_KEYS` lets a resume change,
  and ``--encode-batch``) named in one closing line.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import typer
from typer import _click as click

from termnorm.cli._config_options import PlainHelpCommand, config_options, with_options
from termnorm.options import flag_of, opt
from termnorm.registry import Entry
from termnorm.training.config import RUNTIME_KEYS
from termnorm.training.config.shared import SharedConfig
from termnorm.training.objectives import OBJECTIVES, reads_of, sections_of, sections_read

_LOSS_FLAGS = ("--loss", "--objective")
# devices, speed, logging, checkpoints: every objective's, named in its help's closing line
_RUNTIME = (RUNTIME_KEYS - {"steps"}) | {"encode_batch"}
_DEFAULT_LOSS = str(next(f.default for f in dataclasses.fields(SharedConfig) if f.name == "loss"))


@dataclass
class _RunOptions:
    """The options of ``termnorm train`` that are not settings of the run."""

    resume: bool = opt(False, "Continue from the newest checkpoint.", "--resume")
    config_json: Path | None = opt(  # noqa: RUF009 - opt() returns a dataclasses.Field
        None,
        "JSON file of TrainConfig fields (options given here override it).",
        "--config",
        exists="file",
    )


class ObjectiveCommand(PlainHelpCommand):
    """A command whose options are chosen by ``--loss`` as it parses (module doc)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.params = options_of(OBJECTIVES.resolve(_DEFAULT_LOSS))

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """Take the options of the objective the words name, then parse them."""
        name = loss_in(args)
        try:
            objective = OBJECTIVES.resolve(name or _DEFAULT_LOSS)
        except ValueError as error:
            raise typer.BadParameter(str(error), ctx, param_hint="'--loss'") from None
        general_help = name is None and any(word in ctx.help_option_names for word in args)
        self.params = options_of(None if general_help else objective)
        self.epilog = _closing_line(None if general_help else objective)
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        """Call the command function with every option's value (typer's wrapper knows only
        the options the command was built with)."""
        callback = self.callback
        function = getattr(callback, "__wrapped__", callback)
        return ctx.invoke(function, ctx, **ctx.params)  # type: ignore[arg-type]


def loss_in(args: Sequence[str]) -> str | None:
    """The objective the words name: ``--loss NAME`` / ``--loss=NAME`` (or ``--objective``),
    else the ``loss`` of a ``--config`` file, else ``None``."""
    for i, word in enumerate(args):
        flag, equals, value = word.partition("=")
        if flag in _LOSS_FLAGS:
            return value if equals else (args[i + 1] if i + 1 < len(args) else None)
    for i, word in enumerate(args[:-1]):
        if word == "--config" and Path(args[i + 1]).is_file():
            loss = json.loads(Path(args[i + 1]).read_text(encoding="utf-8")).get("loss")
            return None if loss is None else str(loss)
    return None


def options_of(objective: Entry[Any] | None) -> list[click.Parameter]:
    """Every option, those that ``objective`` does not read hidden (``None``: the general
    help, which shows the options every objective reads)."""
    params = _all_params()
    own = (
        set() if objective is None else {f for kind in sections_of(objective) for f in _names(kind)}
    )
    reads = set() if objective is None else set(reads_of(objective))
    read_by_some = {name for entry in OBJECTIVES for name in reads_of(entry)}
    sections = {f for kind in sections_read(OBJECTIVES) for f in _names(kind)}
    for param in params:
        name = str(param.name)
        if name in sections:
            shown = name in own
        elif name in read_by_some:
            shown = name in reads
        else:
            shown = objective is None or name not in _RUNTIME
        param.hidden = not shown  # type: ignore[attr-defined]
    return params


_CACHE: dict[tuple[str, ...], list[click.Parameter]] = {}


def _all_params() -> list[click.Parameter]:
    """The click options of the shared settings, every registered section and the run
    options, generated once per set of registered objectives."""
    key = tuple(OBJECTIVES.names())
    if key not in _CACHE:
        options = [
            *config_options(SharedConfig),
            *(p for kind in sections_read(OBJECTIVES) for p in config_options(kind)),
            *config_options(_RunOptions),
        ]
        app = typer.Typer(add_completion=False)
        app.command()(with_options(lambda **_: None, [], options))
        _CACHE[key] = typer.main.get_command(app).params
    return _CACHE[key]


def _names(kind: type) -> list[str]:
    """The field names of the settings dataclass ``kind``."""
    return [f.name for f in dataclasses.fields(kind)]  # type: ignore[arg-type]


def _closing_line(objective: Entry[Any] | None) -> str:
    """The help's last line: how to see an objective's options, or the runtime ones."""
    if objective is None:
        return (
            "'termnorm train --loss NAME --help' shows the options of objective NAME: "
            + ", ".join(OBJECTIVES.names())
            + "."
        )
    runtime = ", ".join(sorted(flag_of(k) for k in _RUNTIME))
    return (
        "Runtime options of every objective (devices, speed, logging, checkpoints; 'termnorm "
        f"train --help' describes them): {runtime}."
    )
