"""Calibration of probabilities: expected calibration error and the reliability bins.

With predictions p_i ∈ [0, 1] and outcomes y_i ∈ {0, 1} split into B equal-width bins of p
(bin b holds b/B ≤ p < (b+1)/B, the last bin includes 1), ECE = Σ_b (n_b / n)·|acc_b − conf_b|
where acc_b is the share of y = 1 and conf_b the mean p in bin b (Guo et al. 2017; B = 10).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["DEFAULT_BINS", "ReliabilityBin", "expected_calibration_error", "reliability_bins"]

DEFAULT_BINS = 10


@dataclass(frozen=True)
class ReliabilityBin:
    """One bin of a reliability diagram: its range, size, mean confidence and accuracy."""

    low: float
    high: float
    n: int
    confidence: float
    accuracy: float


def reliability_bins(
    probs: np.ndarray, outcomes: np.ndarray, bins: int = DEFAULT_BINS
) -> list[ReliabilityBin]:
    """The non-empty bins of ``probs`` (module doc); ``ValueError`` on lengths that differ or
    probabilities outside [0, 1]."""
    p = np.asarray(probs, dtype=np.float64)
    y = np.asarray(outcomes, dtype=np.float64)
    if p.shape != y.shape:
        raise ValueError(f"{len(p)} probabilities but {len(y)} outcomes")
    if len(p) and (p.min() < 0 or p.max() > 1):
        raise ValueError("probabilities must lie in [0, 1]")
    which = np.minimum((p * bins).astype(np.int64), bins - 1)
    out = []
    for b in range(bins):
        mask = which == b
        if mask.any():
            out.append(
                ReliabilityBin(
                    b / bins,
                    (b + 1) / bins,
                    int(mask.sum()),
                    float(p[mask].mean()),
                    float(y[mask].mean()),
                )
            )
    return out


def expected_calibration_error(
    probs: np.ndarray, outcomes: np.ndarray, bins: int = DEFAULT_BINS
) -> float:
    """ECE (module doc); 0.0 for no predictions."""
    n = len(probs)
    if n == 0:
        return 0.0
    return float(
        sum(
            b.n / n * abs(b.accuracy - b.confidence)
            for b in reliability_bins(probs, outcomes, bins)
        )
    )
