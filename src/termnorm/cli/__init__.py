"""Command-line interface. Each command group lives in its own module and registers here."""

from __future__ import annotations

import typer

__all__ = ["register_all"]


def register_all(app: typer.Typer) -> None:
    """Add every command group to ``app``. One line per group module."""
    from termnorm.cli import env_cmd

    env_cmd.register(app)
