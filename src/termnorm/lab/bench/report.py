"""Markdown report of a benchmark run: tables (best value per column in bold), plots, the
exact command, versions and timings. Written as ``REPORT_DIR/report.md`` with the PNGs and a
``results.json`` holding every cell."""

from __future__ import annotations

import datetime as dt
import json
import logging
import math
import os
import platform
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path

from termnorm.errors import MissingExtraError
from termnorm.lab.bench.runner import BenchResults, Cell
from termnorm.lab.bench.spec import EvaluatorKind, ModelSpec

__all__ = ["render_markdown", "versions", "write_report"]

logger = logging.getLogger(__name__)

Fmt = Callable[[float], str]


def _pct(x: float) -> str:
    return f"{100 * x:.1f}"


_f3: Fmt = "{:.3f}".format
_f2: Fmt = "{:.2f}".format


def versions() -> dict[str, str]:
    """Versions of termnorm, Python and the libraries that shape the numbers."""
    import importlib.metadata as md

    import torch

    out = {"python": platform.python_version(), "platform": platform.platform()}
    for package in ("termnorm", "torch", "transformers", "sentence-transformers", "numpy"):
        try:
            out[package] = md.version(package)
        except md.PackageNotFoundError:
            out[package] = "absent"
    out["scikit-learn"] = md.version("scikit-learn")
    out["device"] = "cuda" if torch.cuda.is_available() else "cpu"
    out["cpus"] = str(os.cpu_count())
    out["torch threads"] = str(torch.get_num_threads())
    return out


def _cell(value: float | str | None, fmt: Fmt, best: float | None) -> str:
    """A table cell: ``–`` when absent, text as it is, ``n/a`` for NaN, ``best`` in bold."""
    if value is None:
        return "–"
    if isinstance(value, str):
        return value
    if math.isnan(value):
        return "n/a"
    return f"**{fmt(value)}**" if value == best else fmt(value)


def _table(
    header: Sequence[str],
    rows: Sequence[tuple[str, Sequence[float | str | None]]],
    fmts: Sequence[Fmt | None],
    better: Sequence[str | None],
) -> list[str]:
    """Markdown rows; in each numeric column the best value (``max``/``min``) is bold."""
    best: list[float | None] = []
    for j, rule in enumerate(better):
        values = [v for _, vals in rows if isinstance(v := vals[j], float) and not math.isnan(v)]
        # bold only marks a winner when there is a comparison to win
        ranked = len(values) > 1 and rule is not None
        best.append((max(values) if rule == "max" else min(values)) if ranked else None)
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for label, vals in rows:
        cells = [label, *(_cell(v, fmts[j] or _f3, best[j]) for j, v in enumerate(vals))]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _value(cell: Cell | None, key: str) -> float | str | None:
    if cell is None or cell.note is not None:
        return None
    if cell.error is not None:
        return "error"
    return cell.metrics.get(key)


def _by_model(
    results: BenchResults,
    datasets: Sequence[str],
    columns: Sequence[tuple[str, str, Fmt, str | None]],
    models: Sequence[str] | None = None,
) -> list[str]:
    """Rows = models; for each dataset, the given (header, metric, format, better) columns."""
    header = ["model"]
    fmts: list[Fmt | None] = []
    better: list[str | None] = []
    for ds in datasets:
        for title, _, fmt, rule in columns:
            header.append(f"{ds} {title}".strip())
            fmts.append(fmt)
            better.append(rule)
    rows = []
    for model in models or [m.name for m in results.spec.models]:
        vals = [_value(results.cell(model, ds), key) for ds in datasets for _, key, _, _ in columns]
        if any(v is not None for v in vals):
            rows.append((model, vals))
    return _table(header, rows, fmts, better) if rows else []


def _datasets(results: BenchResults, *kinds: EvaluatorKind) -> list[str]:
    return [d.name for d in results.spec.datasets if d.evaluator in kinds]


def _mcsm_tables(results: BenchResults) -> list[str]:
    lines: list[str] = []
    for ds in _datasets(results, EvaluatorKind.MCSM):
        cells = [c for c in results.cells if c.dataset == ds and c.details.get("types")]
        if not cells:
            continue
        types = [t["semantic_type"] for t in cells[0].details["types"]]
        rows: list[tuple[str, Sequence[float | str | None]]] = [
            ("**mean over types**", [c.metrics.get("mean") for c in cells])
        ]
        for t in types:
            rows.append((t, [c.metrics.get(t) for c in cells]))
        k, top = cells[0].details.get("k"), cells[0].details.get("max", float("nan"))
        lines += [f"### {ds} (k = {k}, maximum {top:.2f}; rows: semantic types)", ""]
        lines += _transposed(rows, [c.model for c in cells])
        lines.append("")
    return lines


def _transposed(
    rows: list[tuple[str, Sequence[float | str | None]]], models: list[str]
) -> list[str]:
    """Types as rows, models as columns: the best model per row in bold."""
    lines = ["| type | " + " | ".join(models) + " |", "|" + "---|" * (len(models) + 1)]
    for label, vals in rows:
        numbers = [v for v in vals if isinstance(v, float) and not math.isnan(v)]
        top = max(numbers) if len(numbers) > 1 else None
        shown = [_cell(v, _f2, top) for v in vals]
        lines.append(f"| {label} | " + " | ".join(shown) + " |")
    return lines


_RANKED = (EvaluatorKind.NORMALIZATION, EvaluatorKind.ZERO_SHOT)
_SECTIONS: list[tuple[str, tuple[EvaluatorKind, ...], list[tuple[str, str, Fmt, str | None]]]] = [
    ("Normalization: acc@1 (%)", _RANKED, [("", "acc@1", _pct, "max")]),
    ("Normalization: acc@5 (%)", _RANKED, [("", "acc@5", _pct, "max")]),
    (
        "Relatedness: Spearman ρ / Pearson r between cosine and human scores",
        (EvaluatorKind.RELATEDNESS,),
        [
            ("ρ", "spearman", _f3, "max"),
            ("r", "pearson", _f3, "max"),
            ("cover", "coverage", _pct, None),
        ],
    ),
    (
        "Clustering pairs (θ tuned on one half of the concepts, scores on the other, %)",
        (EvaluatorKind.CLUSTERING,),
        [
            ("θ", "threshold", _f2, None),
            ("P", "precision", _pct, "max"),
            ("R", "recall", _pct, "max"),
            ("F1", "f1", _pct, "max"),
        ],
    ),
    (
        "Relation classification (held-out accuracy, %; majority = always the most frequent label)",
        (EvaluatorKind.RELATION,),
        [("acc", "accuracy", _pct, "max"), ("majority", "majority", _pct, None)],
    ),
    (
        "Link prediction (filtered ranks of held-out tails)",
        (EvaluatorKind.LINKPRED,),
        [
            ("hits@1", "hits@1", _pct, "max"),
            ("hits@10", "hits@10", _pct, "max"),
            ("MR", "mr", _f2, "min"),
            ("MRR", "mrr", _f3, "max"),
        ],
    ),
]
"""The tables by model, in report order (MCSM's per-type tables go after relatedness):
(title, evaluator kinds, (header, metric, format, better) columns)."""


def render_markdown(
    results: BenchResults, plots: dict[str, list[Path]], command: str, out: Path
) -> str:
    """The report text (plots referenced relative to ``out``)."""
    spec = results.spec
    lines = [f"# termnorm benchmark report: {spec.name}", ""]
    lines += ["```", command, "```", ""]
    when = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    lines.append(
        f"Suite `{spec.path}`, generated {when}, wall time {results.wall_seconds:.0f} s "
        f"(cache: {results.cache_hits} hits, {results.cache_misses} computed)."
    )
    lines += ["", " · ".join(f"{k} {v}" for k, v in versions().items()), ""]
    lines += ["Models: " + ", ".join(_describe(m) for m in spec.models) + ".", ""]
    sections = [
        (title, _by_model(results, _datasets(results, *kinds), columns))
        for title, kinds, columns in _SECTIONS
    ]
    sections.insert(3, ("MCSM", _mcsm_tables(results)))
    for title, body in sections:
        if body:
            lines += [f"## {title}", "", *body, ""]
    lines += _figures(plots, out)
    lines += _timing(results)
    return "\n".join(lines).rstrip() + "\n"


def _describe(model: ModelSpec) -> str:
    if model.baseline is not None:
        return f"`{model.name}` (lexical baseline)"
    where = str(model.path) if model.path is not None else "built-in default (all-MiniLM-L6-v2)"
    return f"`{model.name}` ({where}{', ' + model.pooling + ' pooling' if model.pooling else ''})"


def _figures(plots: dict[str, list[Path]], out: Path) -> list[str]:
    titles = {
        "acc_at_k": "acc@k curves",
        "mcsm": "MCSM per semantic type",
        "clustering": "Clustering F1 against θ",
        "tsne": "t-SNE of term vectors",
    }
    lines: list[str] = []
    for kind, paths in plots.items():
        if paths:
            lines += [f"## {titles.get(kind, kind)}", ""]
            lines += [f"![{p.stem}]({p.relative_to(out).as_posix()})" for p in paths]
            lines.append("")
    return lines


def _timing(results: BenchResults) -> list[str]:
    lines = [
        "## Cells: time, cache, notes",
        "",
        "The first cell of a model on a KG includes encoding the KG and building its index.",
        "",
        "| model | dataset | evaluator | seconds | status |",
    ]
    lines.append("|---|---|---|---|---|")
    for c in results.cells:
        status = c.note or (
            f"error: {c.error}" if c.error else ("cached" if c.cached else "computed")
        )
        seconds = "" if c.note else f"{c.seconds:.1f}"
        lines.append(f"| {c.model} | {c.dataset} | {c.evaluator} | {seconds} | {status} |")
    return [*lines, ""]


def write_report(results: BenchResults, out: str | Path, command: str) -> Path:
    """Write ``report.md``, the PNG plots and ``results.json`` into ``out``; return the report."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    try:
        from termnorm.lab.bench.plots import write_plots

        plots = write_plots(results, out)
    except MissingExtraError as exc:
        logger.warning("no plots: %s", exc)
        plots = {}
    report = out / "report.md"
    report.write_text(render_markdown(results, plots, command, out))
    dump = {
        "suite": str(results.spec.path),
        "command": command,
        "wall_seconds": results.wall_seconds,
        "versions": versions(),
        "cells": [asdict(c) for c in results.cells],
    }
    (out / "results.json").write_text(json.dumps(dump, indent=1, default=str))
    return report
