"""PNG figures of a benchmark run (needs matplotlib: the ``lab`` extra).

* ``acc_at_k.png``: acc@k against k per normalization dataset, one line per model.
* ``mcsm_per_type.png``: MCSM per semantic type, one bar per model.
* ``clustering_f1_theta.png``: held-out F1 against θ, one line per model (dotted: tuning).
* ``tsne_<model>.png``: terms coloured by concept and names coloured by semantic type.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from termnorm.errors import MissingExtraError
from termnorm.lab.bench.runner import BenchResults
from termnorm.lab.bench.spec import EvaluatorKind

__all__ = ["write_plots"]

logger = logging.getLogger(__name__)

_RANKED = {EvaluatorKind.NORMALIZATION, EvaluatorKind.ZERO_SHOT}


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name)


def _save(plt: Any, fig: Any, path: Path) -> Path:
    """Lay ``fig`` out, write it to ``path`` and close it."""
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _with_details(
    results: BenchResults, kind: EvaluatorKind, detail: str
) -> Iterator[tuple[str, list[Any]]]:
    """(dataset name, its cells whose details hold ``detail``) per ``kind`` dataset with any."""
    for ds in (d for d in results.spec.datasets if d.evaluator is kind):
        cells = [c for c in results.cells if c.dataset == ds.name and c.details.get(detail)]
        if cells:
            yield ds.name, cells


def _acc_at_k(results: BenchResults, plt: Any, out: Path) -> Path | None:
    datasets = [d for d in results.spec.datasets if d.evaluator in _RANKED]
    if not datasets:
        return None
    cols = min(3, len(datasets))
    rows = -(-len(datasets) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.4 * rows), squeeze=False)
    for ax, ds in zip(axes.flat, datasets, strict=False):
        for model in results.spec.models:
            cell = results.cell(model.name, ds.name)
            if cell is None or not cell.metrics:
                continue
            ks = sorted(int(k[4:]) for k in cell.metrics if re.fullmatch(r"acc@\d+", k))
            ax.plot(ks, [cell.metrics[f"acc@{k}"] for k in ks], marker="o", label=model.name)
        ax.set_title(ds.name)
        ax.set_xlabel("k")
        ax.set_ylabel("acc@k")
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(datasets) :]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=8)
    return _save(plt, fig, out / "acc_at_k.png")


def _mcsm(results: BenchResults, plt: Any, out: Path) -> list[Path]:
    paths: list[Path] = []
    for dataset, cells in _with_details(results, EvaluatorKind.MCSM, "types"):
        types = [t["semantic_type"] for t in cells[0].details["types"]]
        width = 0.8 / len(cells)
        fig, ax = plt.subplots(figsize=(8, 0.32 * len(types) * max(1, len(cells) / 2) + 1.5))
        pos = np.arange(len(types))
        for i, cell in enumerate(cells):
            score = {t["semantic_type"]: t["mean"] for t in cell.details["types"]}
            ax.barh(pos + i * width, [score.get(t, 0.0) for t in types], width, label=cell.model)
        ax.set_yticks(pos + width * (len(cells) - 1) / 2)
        ax.set_yticklabels([t[:45] for t in types], fontsize=7)
        ax.invert_yaxis()
        ax.set_xlabel(f"MCSM (k={cells[0].details.get('k')}, max {cells[0].details['max']:.2f})")
        ax.set_title(f"MCSM per semantic type: {dataset}")
        ax.legend(fontsize=8)
        name = "mcsm_per_type.png" if not paths else f"mcsm_per_type_{_safe(dataset)}.png"
        paths.append(_save(plt, fig, out / name))
    return paths


def _clustering(results: BenchResults, plt: Any, out: Path) -> list[Path]:
    paths: list[Path] = []
    for dataset, cells in _with_details(results, EvaluatorKind.CLUSTERING, "test"):
        fig, ax = plt.subplots(figsize=(6, 4))
        for cell in cells:
            test, tune = cell.details["test"], cell.details["tune"]
            (line,) = ax.plot(test["thresholds"], test["f1"], label=f"{cell.model} (held-out)")
            ax.plot(tune["thresholds"], tune["f1"], ls=":", color=line.get_color())
            ax.axvline(cell.details["threshold"], color=line.get_color(), alpha=0.3)
        ax.set_xlabel("θ (cosine threshold)")
        ax.set_ylabel("F1")
        ax.set_title(f"Clustering pairs: {dataset} (dotted: tuning split)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
        name = "clustering_f1_theta.png" if not paths else f"clustering_{_safe(dataset)}.png"
        paths.append(_save(plt, fig, out / name))
    return paths


def _scatter(ax: Any, layout: dict[str, Any], title: str, legend: bool) -> None:
    labels = layout["label"]
    distinct = list(dict.fromkeys(labels))
    cmap = _colours(len(distinct))
    colour = {label: cmap[i] for i, label in enumerate(distinct)}
    for label in distinct:
        idx = [i for i, lab in enumerate(labels) if lab == label]
        ax.scatter(
            [layout["x"][i] for i in idx],
            [layout["y"][i] for i in idx],
            s=12,
            color=colour[label],
            label=label[:30],
        )
    ax.set_title(title)
    ax.set_xticks([])
    ax.set_yticks([])
    if legend:
        ax.legend(fontsize=6, loc="center left", bbox_to_anchor=(1.0, 0.5), frameon=False)


def _colours(n: int) -> list[Any]:
    import matplotlib

    names = ("tab20", "tab20b", "tab20c")
    base = [matplotlib.colormaps[name](i) for name in names for i in range(20)]
    return [base[i % len(base)] for i in range(n)]


def _tsne(results: BenchResults, plt: Any, out: Path) -> list[Path]:
    paths = []
    for model, layouts in results.tsne.items():
        fig, axes = plt.subplots(1, 2, figsize=(13, 5.5))
        _scatter(axes[0], layouts["by_concept"], f"{model}: terms by concept", legend=False)
        _scatter(axes[1], layouts["by_type"], f"{model}: concepts by semantic type", legend=True)
        paths.append(_save(plt, fig, out / f"tsne_{_safe(model)}.png"))
    return paths


def write_plots(results: BenchResults, out: Path) -> dict[str, list[Path]]:
    """Draw every figure the results support into ``out``; ``{kind: [png, ...]}``."""
    try:
        import matplotlib
    except ImportError as exc:
        raise MissingExtraError("matplotlib", "lab") from exc
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out.mkdir(parents=True, exist_ok=True)
    acc = _acc_at_k(results, plt, out)
    return {
        "acc_at_k": [acc] if acc else [],
        "mcsm": _mcsm(results, plt, out),
        "clustering": _clustering(results, plt, out),
        "tsne": _tsne(results, plt, out),
    }
