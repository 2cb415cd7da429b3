"""Options and help texts that several commands declare the same way.

``--overwrite`` follows :func:`termnorm._artifacts.prepare_output`'s rule: without it an
existing non-empty ``--out`` is refused; with it that folder is replaced atomically once the
work is done. An ``--out`` that is, holds or lies inside one of the command's inputs is refused
either way. ``--encoding`` is checked as the service checks its ``encoding`` field
(:func:`termnorm.io.lines.check_encoding`: a text encoding), before any work. ``--db`` and
``--json`` are every ``termnorm map`` command's; ``--restart``, ``--workers`` and
``--ray-address`` every resumable batch job's (normalize, annotate); ``--threads`` every
command's that encodes text. Help shared with the
library is escaped for Typer's Rich help, which reads ``[word]`` as markup and drops it
(``termnorm[onnx]`` showed as ``termnorm``).
"""

from __future__ import annotations

from typing import Any

import typer
from rich.markup import escape

from termnorm.encoders.runtime import RUNTIME_HELP as _RUNTIME_HELP
from termnorm.encoders.runtime import THREADS_HELP as _THREADS_HELP
from termnorm.io.decoding import DEFAULT_ENCODING

RUNTIME_HELP = escape(_RUNTIME_HELP)
"""``--runtime``'s help (:data:`termnorm.encoders.runtime.RUNTIME_HELP`), escaped."""

DB_HELP = (
    "The project database: a SQLite file or a SQLAlchemy URL (postgresql://user:pw@host/db). "
    "Default PROJECT.termnorm.db here."
)


def overwrite_option() -> Any:
    """``--overwrite`` (default off)."""
    return typer.Option(
        False,
        "--overwrite",
        help="Replace a non-empty --out (its contents are deleted once the new folder is "
        "written). An --out that is, holds or lies inside an input is refused even so.",
    )


def threads_option() -> Any:
    """``--threads``: the encoder's intra-op CPU threads (torch's and ONNX Runtime's), the
    one option of every command that encodes text (a spec's commands generate the same
    flag from :class:`~termnorm.search.spec.PipelineSpec`'s ``threads``)."""
    return typer.Option(None, "--threads", min=1, help=escape(_THREADS_HELP))


def use_threads(threads: int | None) -> None:
    """Set torch's intra-op threads for the rest of this command (``None``: torch's own
    choice), for the commands that encode with torch outside a pipeline spec."""
    from termnorm.encoders.forward import set_threads

    set_threads(threads)


def db_option() -> Any:
    """``--db`` (env ``TERMNORM_PROJECT_DB``)."""
    return typer.Option(None, "--db", envvar="TERMNORM_PROJECT_DB", help=DB_HELP)


def json_option() -> Any:
    """``--json``: print the report as JSON."""
    return typer.Option(False, "--json", help="Print the report as JSON.")


def restart_option() -> Any:
    """``--restart`` of a resumable batch job (default off)."""
    return typer.Option(False, "--restart", help="Drop an interrupted run's chunks and start over.")


def workers_option() -> Any:
    """``--workers``: the Ray actors of ``--engine ray`` (default 1)."""
    return typer.Option(1, "--workers", min=1, help="Ray actors (--engine ray).")


def ray_address_option(shared: str) -> Any:
    """``--ray-address``; ``shared`` says what every node must see (e.g. "the index")."""
    return typer.Option(
        None,
        "--ray-address",
        help="A running Ray cluster (e.g. ray://head:10001 or auto) instead of a local Ray; "
        f"{shared} must be on a file system every node sees.",
    )


def _text_encoding(value: str) -> str:
    """``value`` when it names a text encoding; :class:`typer.BadParameter` saying why not."""
    from termnorm.io.lines import check_encoding

    try:
        return check_encoding(value)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None


def encoding_option(help: str) -> Any:
    """``--encoding`` of an input file (default UTF-8, a byte-order mark skipped), refused
    before any work unless it names a text encoding."""
    return typer.Option(DEFAULT_ENCODING, "--encoding", help=help, callback=_text_encoding)
