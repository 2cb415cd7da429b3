"""Is a model better than a baseline on the same mentions? Paired tests on acc@k.

Both sides are scored on the same mentions, so the tests are paired (per mention), which is
far more sensitive than comparing two accuracies:

- **Exact McNemar test**, one run against the baseline. With b = mentions only the baseline
  gets right and c = mentions only the run gets right,
  ``p = min(1, 2 · P(X ≤ min(b, c)))`` for ``X ~ Binomial(b + c, 1/2)``.
- **Paired bootstrap over mentions**, for one run or several runs of one recipe (seeds).
  With ``a_i`` the baseline's correctness on mention i and ``y_si`` run s's, the per-mention
  difference is ``d_i = mean_s(y_si) − a_i`` and the effect is ``Δ = mean_i d_i``. Mentions
  are resampled with replacement ``n_boot`` times; the confidence interval is the percentile
  interval of the resampled Δ*, and with ``c = min(#{Δ* ≤ 0}, #{Δ* ≥ 0})`` the two-sided
  p-value is ``p = min(1, 2 · (c + 1) / (n_boot + 1))`` (so never below ``2 / (n_boot + 1)``,
  the resolution of ``n_boot`` draws). The runs are held fixed: the interval covers the
  sampling of mentions, not seed-to-seed variation, which the per-run rows show.
- **Cluster bootstrap over documents** (``groups`` given). Mentions of one document are not
  independent (an article repeats "aniridia" seven times), so resampling mentions one by one
  makes the interval too narrow. With ``groups``, the G documents are drawn with replacement
  (``w_g`` copies of document g) and ``Δ* = Σ_g w_g Σ_{i∈g} d_i / Σ_g w_g n_g``; interval and
  p as above. McNemar's test, per run, still treats mentions as independent.
- **Sign-flip permutation test** (``permutation_p``), valid with few documents, where a
  percentile bootstrap over 20–30 clusters is known to give too small p-values. Under the null
  hypothesis the run and the baseline are exchangeable within each unit (a document with
  ``groups``, else a mention), so each unit's total ``D_u = Σ_{i∈u} d_i`` is as likely
  negated. With ``n_boot`` random sign vectors s, ``p = (#{|Σ_u s_u D_u| ≥ |Σ_u D_u|} + 1) /
  (n_boot + 1)``.

Correctness comes from prediction files (``termnorm eval normalize --predictions``), read by
:func:`termnorm.evaluation.predictions.read_correctness`: simple (single-concept) mentions
only, keyed by fold, file name and line, offsets and text. Every file must hold the same
mentions, and each must list at least k candidates for acc@k.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from termnorm.evaluation.predictions import MentionKey

__all__ = [
    "PairedComparison",
    "RunComparison",
    "align_runs",
    "check_bootstrap",
    "compare_runs",
    "group_index",
    "group_weight_chunks",
    "mcnemar_p",
    "sign_flip_p",
    "summarize_draws",
]

CELLS = 4_000_000  # numbers one bootstrap or permutation chunk holds at once (~32 MB)


def mcnemar_p(b: int, c: int) -> float:
    """Exact two-sided McNemar p-value of b vs c discordant pairs (see module doc)."""
    if b < 0 or c < 0:
        raise ValueError(f"discordant counts must be >= 0, got b={b}, c={c}")
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(b, c) + 1)) / 2**n
    return min(1.0, 2 * tail)


def group_index(
    keys: Sequence[MentionKey], groups: Mapping[MentionKey, str]
) -> tuple[np.ndarray, np.ndarray]:
    """``(labels, group_of)``: the distinct groups and each key's index into them.

    Raises:
        ValueError: a key without a group, or fewer than two groups (nothing to resample).
    """
    missing = [key for key in keys if key not in groups]
    if missing:
        raise ValueError(
            f"{len(missing)} mentions have no document (e.g. {missing[0]}): give one for "
            "every mention, e.g. read_documents() of the same predictions file"
        )
    labels, group_of = np.unique([groups[key] for key in keys], return_inverse=True)
    if len(labels) < 2:
        raise ValueError(
            f"all {len(keys)} mentions come from one document ({labels[0]!r}), and resampling "
            "documents needs at least two: resample mentions instead (no groups; the CLI's "
            "--unit mention)"
        )
    return labels, group_of


@dataclass(frozen=True)
class RunComparison:
    """One run against the baseline: accuracy, the discordant counts and McNemar's p."""

    name: str
    accuracy: float
    delta: float
    only_base: int
    only_run: int
    mcnemar_p: float


@dataclass(frozen=True)
class PairedComparison:
    """The baseline, each run, and the seed-pooled bootstrap effect (see module doc)."""

    n: int
    k: int
    base_name: str
    base_accuracy: float
    runs: tuple[RunComparison, ...]
    mean_accuracy: float
    delta: float
    ci_low: float
    ci_high: float
    confidence: float
    bootstrap_p: float
    n_boot: int
    documents: int | None = None  # documents resampled; None: mentions were resampled
    permutation_p: float = 1.0  # sign-flip test over the same units

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (runs as a list of dicts)."""
        out = asdict(self)
        out["runs"] = [asdict(run) for run in self.runs]
        return out


def align_runs(
    base: Mapping[MentionKey, bool], runs: Sequence[Mapping[MentionKey, bool]], names: Sequence[str]
) -> tuple[np.ndarray, np.ndarray]:
    """``(a, y)``: the baseline's correctness ``a[i]`` and each run's ``y[s, i]``, in one
    mention order (keys sorted by ``repr``); a run scored on other mentions raises ValueError.
    """
    keys = sorted(base, key=repr)
    for name, run in zip(names, runs, strict=True):
        if run.keys() != base.keys():
            missing = sorted(base.keys() - run.keys(), key=repr)
            extra = sorted(run.keys() - base.keys(), key=repr)
            example = f"; e.g. missing {missing[0]}" if missing else f"; e.g. extra {extra[0]}"
            raise ValueError(
                f"{name} was scored on other mentions than the baseline ({len(missing)} of the "
                f"baseline's missing, {len(extra)} extra{example}): compare predictions of "
                "the same dataset"
            )
    a = np.array([base[key] for key in keys], dtype=np.float64)
    y = np.array([[run[key] for key in keys] for run in runs], dtype=np.float64)
    return a, y


def _run_comparison(name: str, row: np.ndarray, a: np.ndarray) -> RunComparison:
    only_base = int(((a == 1) & (row == 0)).sum())
    only_run = int(((row == 1) & (a == 0)).sum())
    return RunComparison(
        name=name,
        accuracy=float(row.mean()),
        delta=float(row.mean() - a.mean()),
        only_base=only_base,
        only_run=only_run,
        mcnemar_p=mcnemar_p(only_base, only_run),
    )


def _bootstrap(
    d: np.ndarray, n_boot: int, confidence: float, seed: int
) -> tuple[float, float, float]:
    rng = np.random.default_rng(seed)
    n = d.shape[0]
    draws = np.empty(n_boot, dtype=np.float64)
    chunk = max(1, CELLS // n)  # bounded memory: the indices and their gather
    for start in range(0, n_boot, chunk):
        stop = min(n_boot, start + chunk)
        idx = rng.integers(0, n, size=(stop - start, n))
        draws[start:stop] = d[idx].mean(axis=1)
    return summarize_draws(draws, confidence)


def group_weight_chunks(
    n_groups: int, n_boot: int, seed: int, cells: int = CELLS
) -> Iterator[np.ndarray]:
    """Bootstrap draws over groups, ``(rows, n_groups)`` copies of each group per draw.

    Each draw takes n_groups groups with replacement; the n_boot draws come in chunks of at
    most ``cells`` numbers (bounded memory), the same draws whatever the chunking.
    """
    rng = np.random.default_rng(seed)
    step = max(1, cells // n_groups)
    p = np.full(n_groups, 1 / n_groups)
    for start in range(0, n_boot, step):
        rows = min(step, n_boot - start)
        yield rng.multinomial(n_groups, p, size=rows).astype(np.float64)


def sign_flip_p(totals: np.ndarray, n_perm: int, seed: int) -> float:
    """Two-sided sign-flip permutation p of ``Σ_u D_u`` over units' totals (see module doc)."""
    rng = np.random.default_rng(seed)
    observed = abs(float(totals.sum())) - 1e-9  # ties count as extreme
    step = max(1, CELLS // max(1, totals.shape[0]))
    extreme = 0
    for start in range(0, n_perm, step):
        signs = rng.choice(np.array([-1.0, 1.0]), size=(min(step, n_perm - start), len(totals)))
        extreme += int(np.sum(np.abs(signs @ totals) >= observed))
    return (extreme + 1) / (n_perm + 1)


def check_bootstrap(n_boot: int, confidence: float) -> None:
    """ValueError unless ``n_boot >= 1`` and ``0 < confidence < 1``."""
    if n_boot < 1:
        raise ValueError(f"n_boot must be >= 1, got {n_boot}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")


def summarize_draws(draws: np.ndarray, confidence: float) -> tuple[float, float, float]:
    """Percentile interval and two-sided p of bootstrap draws of Δ (see module doc)."""
    tail = (1.0 - confidence) / 2
    low, high = np.quantile(draws, [tail, 1.0 - tail])
    crossing = min(int(np.sum(draws <= 0)), int(np.sum(draws >= 0)))
    p = min(1.0, 2 * (crossing + 1) / (len(draws) + 1))
    return float(low), float(high), p


def compare_runs(
    base: Mapping[MentionKey, bool],
    runs: Mapping[str, Mapping[MentionKey, bool]],
    *,
    base_name: str = "base",
    k: int = 1,
    n_boot: int = 10_000,
    confidence: float = 0.95,
    seed: int = 0,
    groups: Mapping[MentionKey, str] | None = None,
) -> PairedComparison:
    """Each run against ``base`` (McNemar) and all runs pooled per mention (bootstrap).

    With ``groups`` (mention → document, e.g.
    :func:`~termnorm.evaluation.predictions.read_documents`) the bootstrap resamples
    documents, else mentions (see module doc).

    Raises:
        ValueError: no runs, no mentions, runs scored on other mentions than ``base``,
            ``n_boot``/``confidence`` out of range, or ``groups`` missing a mention or
            naming a single document.
    """
    if not runs:
        raise ValueError("compare_runs needs at least one run besides the baseline")
    if not base:
        raise ValueError("the baseline has no mention to compare on")
    check_bootstrap(n_boot, confidence)
    names = list(runs)
    a, y = align_runs(base, [runs[name] for name in names], names)
    n = a.shape[0]
    per_run = tuple(_run_comparison(name, row, a) for name, row in zip(names, y, strict=True))
    d = y.mean(axis=0) - a
    documents = None
    if groups is None:
        low, high, p = _bootstrap(d, n_boot, confidence, seed)
        totals = d
    else:
        labels, group_of = group_index(sorted(base, key=repr), groups)
        documents = len(labels)
        totals = np.bincount(group_of, d, documents)
        sizes = np.bincount(group_of, minlength=documents).astype(np.float64)
        chunks = group_weight_chunks(documents, n_boot, seed)
        draws = np.concatenate([(w @ totals) / (w @ sizes) for w in chunks])
        low, high, p = summarize_draws(draws, confidence)
    return PairedComparison(
        n=n,
        k=k,
        base_name=base_name,
        base_accuracy=float(a.mean()),
        runs=per_run,
        mean_accuracy=float(y.mean()),
        delta=float(d.mean()),
        ci_low=low,
        ci_high=high,
        confidence=confidence,
        bootstrap_p=p,
        n_boot=n_boot,
        documents=documents,
        permutation_p=sign_flip_p(totals, n_boot, seed),
    )
