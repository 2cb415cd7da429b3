"""Filtered link-prediction metrics of a trained KGE, read from PyKEEN's rank-based evaluator.

PyKEEN ranks, for every test triple (h, r, t), the true tail among all entities for (h, r, ?)
and the true head among all entities for (?, r, t), after removing every other triple known
in the training, validation and test parts (the *filtered* setting). Reported over both
sides, with the *realistic* rank (ties count half, as in ``termnorm eval linkpred``)::

    hits@1, hits@3, hits@10 = share of ranks ≤ 1, 3, 10;  MR = mean rank;  MRR = mean 1/rank
"""

from __future__ import annotations

from typing import Any

__all__ = ["LINKPRED_METRICS", "link_prediction_metrics"]

# our name -> PyKEEN's metric key (side "both", rank type "realistic")
LINKPRED_METRICS = {
    "hits@1": "hits_at_1",
    "hits@3": "hits_at_3",
    "hits@10": "hits_at_10",
    "mr": "arithmetic_mean_rank",
    "mrr": "inverse_harmonic_mean_rank",
}


def link_prediction_metrics(metric_results: Any, prefix: str = "linkpred") -> dict[str, float]:
    """``{"<prefix>_hits@1": ..., "<prefix>_mr": ..., "<prefix>_mrr": ...}`` from PyKEEN's
    ``RankBasedMetricResults`` (both sides, realistic ranks)."""
    return {
        f"{prefix}_{ours}": float(metric_results.get_metric(f"both.realistic.{key}"))
        for ours, key in LINKPRED_METRICS.items()
    }
