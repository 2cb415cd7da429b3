"""Printing evaluator metrics: flat JSON for machines, rich tables for people.

Evaluators return ``{"<name>_<metric>": float}``; the CLI prints the metrics without the
prefix (``acc@1``, ``mrr``, ``spearman``), counts (``n``, ``n_*``) as integers.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

import typer
from rich.console import Console
from rich.table import Table

__all__ = ["json_ready", "print_json", "print_metrics", "unprefixed"]


def unprefixed(metrics: Mapping[str, float], prefix: str) -> dict[str, float]:
    """``{"normalize_acc@1": x}`` → ``{"acc@1": x}`` (keys without the prefix kept as is)."""
    return {key.removeprefix(prefix): value for key, value in metrics.items()}


def _is_count(key: str) -> bool:
    return key == "n" or key.startswith("n_") or key == "folds"


def json_ready(metrics: Mapping[str, float]) -> dict[str, Any]:
    """Counts as ``int``, NaN as ``None`` (JSON has no NaN), other values as ``float``."""
    out: dict[str, Any] = {}
    for key, value in metrics.items():
        if isinstance(value, float) and math.isnan(value):
            out[key] = None
        elif _is_count(key):
            out[key] = int(value)
        else:
            out[key] = float(value)
    return out


def print_json(payload: Mapping[str, Any]) -> None:
    """Print ``payload`` as indented JSON on stdout."""
    typer.echo(json.dumps(payload, indent=2, ensure_ascii=False))


def print_metrics(
    metrics: Mapping[str, float],
    prefix: str,
    json_out: bool,
    title: str,
    info: Mapping[str, Any] | None = None,
) -> None:
    """Print metrics flat in JSON (``info`` keys first) or as a two-column table."""
    plain = json_ready(unprefixed(metrics, prefix))
    if json_out:
        print_json({**(info or {}), **plain})
        return
    table = Table(title=title)
    table.add_column("metric")
    table.add_column("value", justify="right")
    for key, value in plain.items():
        table.add_row(
            key,
            "-" if value is None else f"{value:.4f}" if isinstance(value, float) else str(value),
        )
    Console().print(table)
