"""Printing evaluator metrics for machines: flat JSON with plain metric names.

Evaluators return ``{"<name>_<metric>": float}``; the CLI prints the metrics without the
prefix (``acc@1``, ``mrr``, ``spearman``; :func:`~termnorm.evaluation.metric_names.unprefixed`),
counts (``n``, ``n_*``) as integers.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

import typer


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


def print_json(payload: Mapping[str, Any] | list[Any]) -> None:
    """Print ``payload`` as indented JSON on stdout."""
    typer.echo(json.dumps(payload, indent=2, ensure_ascii=False))


def print_report(report: Any, json_out: bool, line: str) -> None:
    """``report.to_dict()`` as JSON with ``--json``, else the one ``line`` for people."""
    if json_out:
        print_json(report.to_dict())
    else:
        typer.echo(line)
