"""Command-line interface. Each command group lives in its own module and registers here."""

from __future__ import annotations

import typer

__all__ = ["register_all"]


def register_all(app: typer.Typer) -> None:
    """Add every command group to ``app``. One line per group module."""
    from termnorm.cli import env_cmd

    env_cmd.register(app)
    from termnorm.cli import eval_cmd

    eval_cmd.register(app)  # before any module adding commands to eval_cmd.eval_app
    from termnorm.cli import (
        bench_cmd,
        eval_compare_cmd,
        eval_embedding_cmd,
        eval_select_cmd,
        neighbors_cmd,
    )

    eval_embedding_cmd.register(app)
    eval_compare_cmd.register(app)
    eval_select_cmd.register(app)
    bench_cmd.register(app)
    neighbors_cmd.register(app)
    from termnorm.cli import kg_cmd

    kg_cmd.register(app)
    from termnorm.cli import kge_cmd

    kge_cmd.register(app)
    from termnorm.cli import rank_cmd

    rank_cmd.register(app)

    from termnorm.cli import encoder_cmd

    encoder_cmd.register(app)
    from termnorm.cli import train_cmd

    train_cmd.register(app)
    from termnorm.cli import index_cmd

    index_cmd.register(app)
    from termnorm.cli import normalize_cmd

    normalize_cmd.register(app)
    from termnorm.cli import lookup_cmd

    lookup_cmd.register(app)
    from termnorm.cli import serve_cmd

    serve_cmd.register(app)
    from termnorm.cli import map_cmd

    map_cmd.register(app)
