"""Metric names: an evaluator prefixes its metrics with its name, a report takes it off.

Every evaluator returns ``{"<name>_<metric>": float}`` (``normalize_acc@1``, ``mcsm_mean``),
so metrics of several evaluators can share one dict; tables and flat JSON show the plain
metric (``acc@1``). Import-free, so the CLI can use it at start-up.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["prefixed", "unprefixed"]


def prefixed(name: str, metrics: Mapping[str, float]) -> dict[str, float]:
    """``{"f1": x}`` → ``{"<name>_f1": x}`` (values cast to ``float``)."""
    return {f"{name}_{key}": float(value) for key, value in metrics.items()}


def unprefixed(metrics: Mapping[str, float], prefix: str) -> dict[str, float]:
    """``{"normalize_acc@1": x}`` → ``{"acc@1": x}`` for ``prefix="normalize_"`` (an
    evaluator's ``prefix``: its name and ``_``); keys without it are kept as they are, values
    cast to ``float``."""
    return {key.removeprefix(prefix): float(value) for key, value in metrics.items()}
