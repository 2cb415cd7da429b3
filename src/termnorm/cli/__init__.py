"""Command-line interface. Each command group lives in its own module and registers here."""

from __future__ import annotations

import typer

__all__ = ["register_all"]


def register_all(app: typer.Typer) -> None:
    """Add every command group to ``app``: one name per group module. The ``eval_*_cmd``
    modules add their commands to ``eval_cmd.eval_app`` when imported."""
    from termnorm.cli import (
        annotate_cmd,
        bench_cmd,
        encoder_cmd,
        env_cmd,
        eval_annotate_cmd,  # noqa: F401
        eval_cmd,
        eval_compare_cmd,  # noqa: F401
        eval_embedding_cmd,  # noqa: F401
        index_cmd,
        kg_cmd,
        kge_cmd,
        lookup_cmd,
        map_cmd,
        neighbors_cmd,
        ner_cmd,
        normalize_cmd,
        rank_cmd,
        serve_cmd,
        train_cmd,
    )

    for group in (
        env_cmd,
        eval_cmd,
        bench_cmd,
        neighbors_cmd,
        kg_cmd,
        kge_cmd,
        rank_cmd,
        encoder_cmd,
        train_cmd,
        index_cmd,
        normalize_cmd,
        annotate_cmd,
        ner_cmd,
        lookup_cmd,
        serve_cmd,
        map_cmd,
    ):
        group.register(app)
