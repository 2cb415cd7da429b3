"""The model card (``README.md``) written beside a trained model.

Sections: how to use the model, the training configuration, KG statistics, throughput and
memory, loss curves (``loss_curves.png`` when matplotlib is installed, a table otherwise) and
dev results (final and best).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from termnorm.encoders.interpolation import FINETUNED_FILE
from termnorm.training.config import TrainConfig

logger = logging.getLogger(__name__)

__all__ = ["OBJECTIVE_CARD_FILE", "read_log", "write_model_card"]

PLOT_FILE = "loss_curves.png"
OBJECTIVE_CARD_FILE = "objective.json"
"""What an objective records about itself in ``save`` (e.g. its KGE); shown on the card."""
_LOSS_KEYS = ("loss", "ms", "rel", "sty", "distill_en", "distill_tr")


def read_log(path: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``(train records, eval records)`` of a JSONL training log."""
    train: list[dict[str, Any]] = []
    evals: list[dict[str, Any]] = []
    if path.is_file():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                record = json.loads(line)
                (evals if "eval" in record else train).append(record)
    return train, evals


def plot_losses(records: list[dict[str, Any]], out: Path) -> Path | None:
    """Write the loss curves PNG; None when matplotlib is missing or there is nothing to plot."""
    if not records:
        return None
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        logger.info("matplotlib not installed: the model card has no loss plot")
        return None
    fig, ax = plt.subplots(figsize=(6, 3.5))
    steps = [r["step"] for r in records]
    for key in _LOSS_KEYS:
        if any(key in r for r in records):
            ax.plot(steps, [r.get(key, float("nan")) for r in records], label=key)
    ax.set_xlabel("step")
    ax.set_ylabel("loss")
    ax.legend()
    fig.tight_layout()
    path = out / PLOT_FILE
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def _table(rows: list[tuple[str, Any]]) -> str:
    lines = ["| | |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in rows]
    return "\n".join(lines)


def write_model_card(
    out: Path,
    config: TrainConfig,
    kg_counts: dict[str, int],
    kg_card: dict[str, Any],
    sampler_stats: dict[str, int],
    log_path: Path,
    final_metrics: dict[str, float],
    best: dict[str, Any] | None,
    selected: str,
    runtime: dict[str, Any] | None = None,
) -> Path:
    """Write ``out/README.md`` (and the loss plot); return the card's path."""
    records, evals = read_log(log_path)
    plot = plot_losses(records, out)
    cfg = config.to_dict()
    last = records[-1] if records else {}
    speeds = sorted(r["terms_per_s"] for r in records if "terms_per_s" in r)
    sections = [
        "---\nlibrary_name: sentence-transformers\ntags: [termnorm, coder, medical-terms]\n---",
        "# termnorm model\n\nTrained by `termnorm train` (CODER-style knowledge-infused "
        "contrastive learning).\n\n```bash\ntermnorm index build --model . --kg KG_DIR --out "
        "INDEX_DIR\n```\n\n```python\nfrom sentence_transformers import SentenceTransformer\n"
        'model = SentenceTransformer("PATH")\nvectors = model.encode(["heart attack"])\n```',
        "## Configuration\n\n" + _table([(k, f"`{v}`") for k, v in cfg.items()]),
        "## Knowledge graph\n\n"
        + _table(
            [("fingerprint", kg_card.get("fingerprint", ""))]
            + [(f"KG {k}", v) for k, v in kg_counts.items()]
            + [(f"sampled {k}", v) for k, v in sampler_stats.items()]
            + [(f"domain {k}", v) for k, v in kg_card.get("domain_terms", {}).items()]
        ),
        "## Throughput\n\n"
        + _table(
            [
                ("steps", last.get("step", 0)),
                ("wall time (s)", round(float(last.get("elapsed_s", 0.0)), 1)),
                ("median terms/s", round(speeds[len(speeds) // 2], 1) if speeds else "n/a"),
                ("peak RSS (MiB)", round(float(last.get("rss_mb", 0.0)), 1)),
                *sorted((runtime or {}).items()),
            ]
        ),
    ]
    objective_card = out / OBJECTIVE_CARD_FILE
    if objective_card.is_file():
        rows = json.loads(objective_card.read_text(encoding="utf-8"))
        sections.insert(3, "## Objective\n\n" + _table([(k, f"`{v}`") for k, v in rows.items()]))
    if config.wise_alpha < 1.0:
        sections.insert(
            2,
            f"The saved weights are WiSE-FT: {config.wise_alpha:g} × trained + "
            f"{1 - config.wise_alpha:g} × the base model; the trained ones are kept in "
            f"`{FINETUNED_FILE}`, and the dev results below are theirs.",
        )
    if plot is not None:
        sections.append(f"## Loss curves\n\n![loss curves]({PLOT_FILE})")
    elif records:
        keys = [k for k in _LOSS_KEYS if k in records[-1]]
        rows = ["| step | " + " | ".join(keys) + " |", "|---" * (len(keys) + 1) + "|"]
        stride = max(1, len(records) // 20)
        for r in records[::stride]:
            rows.append(f"| {r['step']} | " + " | ".join(f"{r[k]:.4f}" for k in keys) + " |")
        sections.append("## Loss curves\n\n" + "\n".join(rows))
    if evals or final_metrics:
        lines = ["## Dev results", "", f"Saved weights: **{selected}** model."]

        if best is not None:
            lines.append(f"Best at step {best['step']}: {best['score']:.4f}.")
        lines += ["", "| step | metric | value |", "|---|---|---|"]
        for e in evals:
            for k, v in e["eval"].items():
                if "acc@" in k or k.endswith("mrr"):
                    lines.append(f"| {e['step']} | {k} | {v:.4f} |")
        sections.append("\n".join(lines))
    path = out / "README.md"
    path.write_text("\n\n".join(sections) + "\n", encoding="utf-8")
    return path
