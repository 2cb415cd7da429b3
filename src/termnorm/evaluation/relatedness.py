"""Semantic relatedness / similarity: cosine of two terms against human scores.

Spearman's ρ (primary) and Pearson's r between cos(e_a, e_b) and the reference score over the
pairs a model can embed; ``coverage`` is the share of the file's pairs that were evaluated
(a pair with an empty term, or a term the model returns no usable vector for, is counted and
reported, not crashed on).

Pair files (read by :func:`read_pairs`):

* MayoSRS-style CSV with a header naming ``TERM1`` and ``TERM2`` columns; every other numeric
  column is a rater group (MiniMayoSRS: ``Physicians``, ``Coders``). The reference score is the
  mean of the rater columns, and each rater column is also scored on its own
  (``spearman_physicians``, ...).
* UMNSRS-style ``term1<TAB>term2<TAB>score`` (or comma-separated) without header.
"""

from __future__ import annotations

import csv
import io
import logging
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from termnorm.errors import EmptyResultError, InputFormatError
from termnorm.evaluation.embedding import Embedder, EmbeddingEvaluator, encode_texts

__all__ = ["RelatednessEvaluator", "RelatednessPairs", "RelatednessResult", "read_pairs"]

logger = logging.getLogger(__name__)


@dataclass
class RelatednessPairs:
    """Term pairs with one or more columns of reference scores."""

    term1: list[str]
    term2: list[str]
    scores: dict[str, list[float]]
    path: Path | None = None

    def __len__(self) -> int:
        return len(self.term1)

    def reference(self) -> np.ndarray:
        """Mean over the score columns, per pair."""
        return np.mean(np.array(list(self.scores.values()), dtype=np.float64), axis=0)


def _float(path: Path, line: int, value: str, what: str) -> float:
    try:
        x = float(value)
    except ValueError:
        raise InputFormatError(path, line, f"{what} {value!r} is not a number") from None
    if not math.isfinite(x):
        raise InputFormatError(path, line, f"{what} {value!r} is not a finite number")
    return x


def read_pairs(path: str | Path) -> RelatednessPairs:
    """Read a MayoSRS-style CSV (with header) or a UMNSRS-style TSV/CSV (no header)."""
    path = Path(path)
    if not path.is_file():
        raise InputFormatError(path, None, "relatedness pair file not found")
    text = path.read_text(encoding="utf-8-sig")
    numbered = [(i, ln) for i, ln in enumerate(text.splitlines(), start=1) if ln.strip()]
    if not numbered:
        raise EmptyResultError(f"{path}: the relatedness pair file is empty")
    delimiter = "\t" if "\t" in numbered[0][1] else ","
    rows = [(i, next(csv.reader(io.StringIO(ln), delimiter=delimiter))) for i, ln in numbered]
    header = [h.strip().lower() for h in rows[0][1]]
    if "term1" in header and "term2" in header:
        return _read_with_header(path, rows, header)
    term1, term2, score = [], [], []
    for lineno, row in rows:
        if len(row) != 3:
            raise InputFormatError(
                path, lineno, f"expected term1, term2, score ({len(row)} fields found)"
            )
        term1.append(row[0].strip())
        term2.append(row[1].strip())
        score.append(_float(path, lineno, row[2].strip(), "score"))
    return RelatednessPairs(term1, term2, {"score": score}, path)


def _read_with_header(
    path: Path, rows: list[tuple[int, list[str]]], header: list[str]
) -> RelatednessPairs:
    i1, i2 = header.index("term1"), header.index("term2")
    body = rows[1:]
    if not body:
        raise EmptyResultError(f"{path}: the relatedness pair file has a header but no pair")
    score_cols = []
    for j, name in enumerate(header):
        if j in (i1, i2) or name.startswith("cui") or name.endswith("id"):
            continue
        values = [r[j].strip() if j < len(r) else "" for _, r in body]
        if all(_is_number(v) for v in values):
            score_cols.append(j)
    if not score_cols:
        raise InputFormatError(path, 1, "no numeric score column next to TERM1/TERM2")
    term1, term2 = [], []
    scores: dict[str, list[float]] = {header[j]: [] for j in score_cols}
    for lineno, row in body:
        if len(row) != len(header):
            raise InputFormatError(
                path, lineno, f"expected {len(header)} fields as in the header, got {len(row)}"
            )
        term1.append(row[i1].strip())
        term2.append(row[i2].strip())
        for j in score_cols:
            scores[header[j]].append(_float(path, lineno, row[j].strip(), header[j]))
    return RelatednessPairs(term1, term2, scores, path)


def _is_number(value: str) -> bool:
    try:
        return math.isfinite(float(value))
    except ValueError:
        return False


def _correlations(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """(Spearman, Pearson); NaN when fewer than 3 pairs or a constant side."""
    from scipy.stats import pearsonr, spearmanr

    if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan"), float("nan")
    return float(spearmanr(x, y)[0]), float(pearsonr(x, y)[0])


@dataclass
class RelatednessResult:
    """Correlations over the evaluated pairs, coverage, and the pairs left out."""

    spearman: float
    pearson: float
    pairs: int
    evaluated: int
    per_rater: dict[str, tuple[float, float]] = field(default_factory=dict)
    skipped: list[tuple[int, str, str]] = field(default_factory=list)

    @property
    def coverage(self) -> float:
        """Evaluated pairs / pairs in the file."""
        return self.evaluated / self.pairs if self.pairs else 0.0

    def metrics(self) -> dict[str, float]:
        """Flat metrics without prefix."""
        out = {
            "spearman": self.spearman,
            "pearson": self.pearson,
            "coverage": self.coverage,
            "pairs": float(self.pairs),
            "evaluated": float(self.evaluated),
        }
        if len(self.per_rater) > 1:
            for rater, (rho, r) in self.per_rater.items():
                out[f"spearman_{rater}"] = rho
                out[f"pearson_{rater}"] = r
        return out

    def to_dict(self) -> dict[str, object]:
        """JSON-ready details, with the skipped pairs (1-based pair number, terms)."""
        return {
            **self.metrics(),
            "skipped": [{"pair": i, "term1": a, "term2": b} for i, a, b in self.skipped],
        }


class RelatednessEvaluator(EmbeddingEvaluator):
    """Spearman/Pearson between cosine and human scores on a pair file.

    Args:
        pairs: a :class:`RelatednessPairs` or the path of a pair file.
        name: metric prefix (e.g. ``mayosrs``).
    """

    primary = "spearman"

    def __init__(self, pairs: RelatednessPairs | str | Path, name: str = "relatedness") -> None:
        self.pairs = pairs if isinstance(pairs, RelatednessPairs) else read_pairs(pairs)
        self.name = name

    def evaluate(self, model: Embedder) -> RelatednessResult:
        """Cosine per pair, then correlations over the pairs both of whose terms embed."""
        p = self.pairs
        vectors, mask = encode_texts(model, p.term1 + p.term2)
        n = len(p)
        a, b = vectors[:n], vectors[n:]
        ok = mask[:n] & mask[n:]
        if not ok.any():
            where = f" in {p.path}" if p.path else ""
            raise EmptyResultError(f"no pair{where} could be embedded (all have an empty term)")
        cos = (a * b).sum(axis=1)[ok].astype(np.float64)
        rho, r = _correlations(cos, p.reference()[ok])
        per_rater = {
            rater: _correlations(cos, np.asarray(values, dtype=np.float64)[ok])
            for rater, values in p.scores.items()
        }
        skipped = [(int(i) + 1, p.term1[i], p.term2[i]) for i in np.flatnonzero(~ok)]
        if skipped:
            logger.warning("relatedness: %d of %d pairs could not be embedded", len(skipped), n)
        return RelatednessResult(rho, r, n, int(ok.sum()), per_rater, skipped)
