"""The command examples users copy: the code blocks and command cells of the README and of
every ``docs/`` page, and every ``--help`` epilog. Read as a shell reads them (``\\`` continuations, ``#`` comments, quotes),
and checked against the real command tree without running anything: the sub-command path
exists, every option is one the command has, a choice names an allowed value, and no
positional argument is missing or left over."""

from __future__ import annotations

import enum
import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import typer

try:  # typer vendors its click from 0.2x on
    from typer import _click as click  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - older typer runs on click itself
    import click  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
FENCE = re.compile(r"^```(\w*)\s*$")
INLINE = re.compile(r"`(termnorm [^`]+)`")
PLACEHOLDER = re.compile(r"…|\.\.\.|\bsame\b")  # "same, --mode concept": not a whole command


@dataclass(frozen=True)
class Example:
    """One command line (without the leading ``termnorm``) and where it was written."""

    where: str
    argv: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.where}: termnorm {shlex.join(self.argv)}"


def _commands_in(lines: list[str], where: str) -> Iterator[Example]:
    """The ``termnorm …`` commands of shell lines (continuations joined, comments dropped);
    a line of several commands (``a && b``, ``a | b``) gives each ``termnorm`` part."""
    joined: list[tuple[int, str]] = []
    buffer, start = "", 0
    for number, line in enumerate(lines, start=1):
        if not buffer:
            start = number
        if line.rstrip().endswith("\\"):
            buffer += line.rstrip()[:-1] + " "
            continue
        joined.append((start, buffer + line))
        buffer = ""
    for number, line in joined:
        words = shlex.split(line, comments=True)
        command: list[str] = []
        for word in [*words, "&&"]:
            if word in {"&&", "||", "|", ";"}:
                if command[:1] == ["termnorm"]:
                    yield Example(f"{where}:{number}", tuple(command[1:]))
                command = []
            else:
                command.append(word)


def pages() -> list[Path]:
    """The pages users read: the README, then every ``docs/`` page (sub-folders included)."""
    return [README, *sorted(DOCS.rglob("*.md"))]


def page_examples(path: Path = README, root: Path = ROOT) -> list[Example]:
    """Every ``termnorm`` command in a page's ``bash`` blocks and in the code spans of its
    table cells that hold a whole command (no ``…`` placeholder), named ``page:line`` with
    the page's path from ``root``."""
    name = path.relative_to(root).as_posix()
    lines = path.read_text(encoding="utf-8").splitlines()
    out: list[Example] = []
    block: list[str] | None = None
    block_start = 0
    for number, line in enumerate(lines, start=1):
        fence = FENCE.match(line)
        if fence and block is None:
            block, block_start = (
                ([] if fence.group(1) in {"bash", "sh", "console"} else None),
                number,
            )
            if block is None:
                block = ["__skip__"]
            continue
        if fence and block is not None:
            if block[:1] != ["__skip__"]:
                out += [
                    Example(f"{name}:{block_start + int(e.where.rsplit(':', 1)[1])}", e.argv)
                    for e in _commands_in(block, "block")
                ]
            block = None
            continue
        if block is not None:
            block.append(line)
            continue
        if not line.lstrip().startswith("|"):
            continue  # prose names commands (`termnorm lookup`); table cells hold whole ones
        for span in INLINE.findall(line):
            if not PLACEHOLDER.search(span):
                out += [Example(f"{name}:{number}", e.argv) for e in _commands_in([span], "")]
    return out


def doc_examples() -> list[Example]:
    """The commands of every page, each named by its page and line."""
    return [example for path in pages() for example in page_examples(path)]


def _is_group(command: Any) -> bool:
    return hasattr(command, "list_commands")


def walk(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    """Every command of the tree with its path of names."""
    yield path, command
    if _is_group(command):
        ctx = click.Context(command)
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is not None:
                yield from walk(sub, (*path, name))


def help_examples(root: Any) -> list[Example]:
    """The ``termnorm …`` lines of every command's ``--help`` epilog."""
    out: list[Example] = []
    for path, command in walk(root):
        lines: list[str] = []
        for line in (command.epilog or "").splitlines():
            text = line.strip()
            if text.startswith("termnorm ") or (lines and lines[-1].endswith("\\")):
                lines.append(text)
        out += _commands_in(lines, f"termnorm {' '.join(path)} --help")
    return out


def command_tree() -> Any:
    """The ``termnorm`` command tree as ``main`` builds it."""
    from termnorm.cli.main import _register, app

    _register()
    return typer.main.get_command(app)


def problem(root: Any, example: Example) -> str | None:
    """Why ``example`` would not parse (``None``: it parses). Nothing runs: options are
    matched by the command's own parser; only enum choices are checked for their values."""
    command, args = root, list(example.argv)
    ctx = click.Context(root, info_name="termnorm")
    while _is_group(command):
        _, rest = _split_leading_options(args)
        if not rest:
            return None  # `termnorm --help` and the like
        sub = command.get_command(ctx, rest[0])
        if sub is None:
            known = ", ".join(command.list_commands(ctx))
            return f"no command {rest[0]!r} (known: {known})"
        command, args = sub, rest[1:]
        ctx = click.Context(command, parent=ctx, info_name=sub.name)
    if "--help" in args:
        return None
    try:
        values, extra, _ = command.make_parser(ctx).parse_args(args)
    except Exception as exc:  # the parser's UsageError kinds
        if not hasattr(exc, "format_message"):
            raise
        return str(exc.format_message())
    if extra:
        return f"unexpected extra arguments {extra}"
    for param in command.params:
        value = values.get(param.name)
        if value is None:
            if param.param_type_name == "argument" and param.required:
                return f"missing argument {param.name.upper()}"
            continue
        choices = _enum_values(param)
        items = value if isinstance(value, (list, tuple)) else [value]
        wrong = [v for v in items if choices is not None and v not in choices]
        if wrong:
            return f"{param.opts[0]} {wrong[0]!r}: not one of {sorted(choices or ())}"
    return None


def _enum_values(param: Any) -> set[str] | None:
    """The allowed values of an option typed by a ``str`` enum (``None``: not a choice)."""
    annotation = getattr(getattr(param, "type_descriptor", None), "annotation", None)
    for candidate in (annotation, *getattr(annotation, "__args__", ())):
        if isinstance(candidate, type) and issubclass(candidate, enum.Enum):
            return {str(member.value) for member in candidate}
    return None


def _split_leading_options(args: list[str]) -> tuple[list[str], list[str]]:
    """A group's own flags (``--debug``, ``-v``) before its sub-command name."""
    i = 0
    while i < len(args) and args[i].startswith("-"):
        i += 1
    return args[:i], args[i:]
