"""The ``termnorm`` command: one Typer app, one sub-module per command group.

Errors from termnorm (bad input, mismatched artifacts) print one line on stderr and exit 1;
``--debug`` shows the full traceback.
"""

from __future__ import annotations

import errno
import logging
import os
import sys

import typer

app = typer.Typer(
    name="termnorm",
    help="Normalize medical terms to concept IDs with knowledge-infused term embeddings.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


@app.callback()
def _root(
    debug: bool = typer.Option(False, "--debug", help="Show full tracebacks on error."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Log progress details."),
) -> None:
    """termnorm: terminologies in, concept IDs out."""  # --debug: main() reads argv
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )


def _register() -> None:
    """Attach the command groups (imports are cheap: heavy work happens inside commands)."""
    from termnorm.cli import register_all

    register_all(app)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point."""
    args = argv if argv is not None else sys.argv[1:]
    if not {"-v", "--verbose"} & set(args):  # per-load weight bars of transformers are noise
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    _register()
    try:
        app(args=argv, standalone_mode=True)
    except SystemExit:
        raise
    except Exception as exc:  # one line, unless --debug
        if "--debug" in args:
            raise
        typer.echo(f"error: {_user_message(exc)}", err=True)
        raise SystemExit(1) from None


def _user_message(exc: Exception) -> str:
    """The error's one line; a write refused by a read-only file system anywhere (writes the
    library does not route through :func:`termnorm.paths.writing`) says what to change."""
    if isinstance(exc, OSError) and exc.errno == errno.EROFS:
        from termnorm.paths import not_writable

        return str(not_writable(exc))
    return str(exc)


if __name__ == "__main__":  # python -m termnorm.cli.main
    main()
