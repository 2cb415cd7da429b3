"""Choosing a setting on a dev set, and what the choice is really worth: cross-fitted selection.

Picking the best of several settings (an interpolation weight, a step count, a recipe) on the
mentions that also score it overstates its gain: part of the winner's lead is luck on those
mentions. Cross-fitting scores each mention with a setting chosen without it.

- **Groups.** Mentions fall into groups, by default their documents: mentions of one article
  share wording and repeat ("high arched palate" three times), so a document is the unit that
  is left out and resampled. For files without documents, give each mention its own group.
- **Cross-fitted choice.** For each group g, the setting with the highest accuracy on the
  mentions outside g is chosen, ties going to the earliest listed setting (list the default
  first). With ``m_c[i]`` the correctness of setting c on mention i averaged over its runs
  (seeds) and ``a[i]`` the baseline's,
  ``Δ = Σ_g Σ_{i∈g} (m_{ĉ(g)}[i] − a[i]) / n``.
- **Uncertainty.** A cluster bootstrap over groups that repeats the whole selection in each
  draw: the G groups are drawn with replacement (``w_g`` copies of group g), each drawn
  group's setting is chosen on the other drawn groups (every copy of g left out), and
  ``Δ* = Σ_g w_g Σ_{i∈g} (m_{ĉ*(g)}[i] − a[i]) / Σ_g w_g n_g``. The interval is the
  percentile interval of Δ*; with ``c = min(#{Δ* ≤ 0}, #{Δ* ≥ 0})`` the two-sided p-value is
  ``p = min(1, 2 · (c + 1) / (n_boot + 1))``, as in :mod:`termnorm.lab.significance`.

The naive figure, the setting best on all mentions scored on those same mentions, is
reported beside it for contrast: it is what a table of dev results suggests, and the
cross-fitted Δ is what choosing that way is expected to deliver on new documents.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from termnorm.evaluation.predictions import MentionKey
from termnorm.lab.significance import (
    CELLS,
    align_runs,
    check_bootstrap,
    group_index,
    group_weight_chunks,
    summarize_draws,
)

__all__ = ["CrossFitSelection", "SettingScore", "cross_fitted_selection"]

_TIE_DECIMALS = 9  # accuracy sums are compared rounded, so float noise never breaks a tie


@dataclass(frozen=True)
class SettingScore:
    """One setting on all mentions: accuracy pooled over its runs, and Δ to the baseline."""

    name: str
    runs: int
    accuracy: float
    delta: float


@dataclass(frozen=True)
class CrossFitSelection:
    """The settings, the naive pick, and the cross-fitted choice with its bootstrap interval."""

    n: int
    groups: int
    k: int
    base_name: str
    base_accuracy: float
    settings: tuple[SettingScore, ...]
    naive_choice: str
    naive_delta: float
    chosen: dict[str, int]
    accuracy: float
    delta: float
    ci_low: float
    ci_high: float
    confidence: float
    bootstrap_p: float
    n_boot: int

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (settings as a list of dicts)."""
        out = asdict(self)
        out["settings"] = [asdict(setting) for setting in self.settings]
        return out


def _crossfit(
    weights: np.ndarray, sums: np.ndarray, base_sums: np.ndarray, sizes: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Δ and the chosen setting per group, for each row of group weights (see module doc).

    Shapes: weights (B, G) group copies per draw; sums (G, C) correct answers of setting c in
    group g; base_sums (G,) and sizes (G,). Returns Δ (B,) and choices (B, G).
    """
    total = weights @ sums  # (B, C)
    left_out = total[:, None, :] - weights[:, :, None] * sums[None, :, :]  # (B, G, C)
    choice = np.argmax(np.round(left_out, _TIE_DECIMALS), axis=2)  # (B, G), first max wins
    picked = sums[np.arange(sums.shape[0])[None, :], choice]  # (B, G)
    return (weights * (picked - base_sums)).sum(axis=1) / (weights @ sizes), choice


def cross_fitted_selection(
    base: Mapping[MentionKey, bool],
    settings: Mapping[str, Sequence[Mapping[MentionKey, bool]]],
    groups: Mapping[MentionKey, str],
    *,
    base_name: str = "base",
    k: int = 1,
    n_boot: int = 10_000,
    confidence: float = 0.95,
    seed: int = 0,
) -> CrossFitSelection:
    """Cross-fitted choice among ``settings`` (name → runs) against ``base`` (see module doc).

    Raises:
        ValueError: fewer than two settings, a setting without runs, runs scored on other
            mentions than ``base``, a mention without a group, fewer than two groups, or
            ``n_boot``/``confidence`` out of range.
    """
    if len(settings) < 2:
        raise ValueError("cross-fitted selection needs at least two settings to choose from")
    check_bootstrap(n_boot, confidence)
    names = list(settings)
    matrices = []
    for name in names:
        runs = settings[name]
        if not runs:
            raise ValueError(f"setting {name!r} has no runs")
        a, y = align_runs(base, runs, [f"{name} run {i + 1}" for i in range(len(runs))])
        matrices.append(y.mean(axis=0))
    m = np.stack(matrices, axis=1)  # (n, C): per-mention correctness, averaged over runs
    labels, group_of = group_index(sorted(base, key=repr), groups)  # align_runs' order
    sums = np.stack([np.bincount(group_of, m[:, c], len(labels)) for c in range(len(names))], 1)
    base_sums = np.bincount(group_of, a, len(labels))
    sizes = np.bincount(group_of, minlength=len(labels)).astype(np.float64)
    point, choice = _crossfit(np.ones((1, len(labels))), sums, base_sums, sizes)
    cells = max(1, CELLS // len(names))  # a chunk holds draws × groups × settings
    draws = np.concatenate(
        [
            _crossfit(w, sums, base_sums, sizes)[0]
            for w in group_weight_chunks(len(labels), n_boot, seed, cells)
        ]
    )
    low, high, p = summarize_draws(draws, confidence)
    overall = m.mean(axis=0)
    naive = int(np.argmax(np.round(overall, _TIE_DECIMALS)))
    return CrossFitSelection(
        n=len(group_of),
        groups=len(labels),
        k=k,
        base_name=base_name,
        base_accuracy=float(a.mean()),
        settings=tuple(
            SettingScore(name, len(settings[name]), float(overall[c]), float(overall[c] - a.mean()))
            for c, name in enumerate(names)
        ),
        naive_choice=names[naive],
        naive_delta=float(overall[naive] - a.mean()),
        chosen={name: int(np.sum(choice[0] == c)) for c, name in enumerate(names)},
        accuracy=float(a.mean() + point[0]),
        delta=float(point[0]),
        ci_low=low,
        ci_high=high,
        confidence=confidence,
        bootstrap_p=p,
        n_boot=n_boot,
    )
