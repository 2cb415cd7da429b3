"""The learned, calibrated combiner: P(candidate is correct) from recall, lexical and ranker
features, fitted by logistic regression on cross-fitted training candidates.

For a query q and its recalled candidates c_1..c_k (k = ``k_c``, in recall order) each
candidate gets the features of :data:`FEATURES`:

``recall_score``  the score recall ordered by (the cosine, or the hybrid score);
``cosine``        the dense cosine (``recall_score`` of a hybrid candidate, else the score);
``gap_to_top``    the top candidate's ``recall_score`` minus this one's;
``log_rank``      ln(recall rank);
``domain``        1 when the matched text is a domain synonym (a training mention), else 0;
``preferred``     1 when the matched text is the concept's preferred name;
``tfidf``         the char 3-gram TF-IDF cosine of q and the concept's best text
                  (:meth:`~termnorm.search.lexical.TfidfMatcher.concept_scores`);
``token_overlap`` Jaccard overlap of the normalized word sets of q and the matched text;
``exact``         1 when q equals the matched text after
                  :func:`~termnorm.search.lexical.normalize_text`;
``ranker_logit``  logit of the ranker's probability (only when the combiner uses a ranker).

The model is p = σ(b + Σ_j w_j·(x_j − μ_j)/σ_j) (features standardized on the training rows,
L2-regularized logistic regression, scikit-learn), stored as plain numbers in a JSON card
(:meth:`Combiner.to_dict`), no pickle.
:class:`~termnorm.search.stages.combiner.matcher.CombinedMatcher` orders candidates by p
(``score``; ``min_score`` is then a probability threshold). The recall score is a feature:
when the others carry no signal the weights leave them out and the recall order stays.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from termnorm.search.candidate import Candidate, RowMatcher, Source, is_name
from termnorm.search.domain import SearchSpace
from termnorm.search.lexical.dictionary import normalize_text
from termnorm.search.lexical.tfidf import TfidfMatcher
from termnorm.search.space_matcher import SpaceMatcher
from termnorm.search.stages.hybrid.matcher import HybridMatcher, space_kg

__all__ = [
    "BASE_FEATURES",
    "FEATURES",
    "Combiner",
    "RankerLike",
    "candidate_features",
    "feature_rows",
    "fit_combiner",
    "reorder",
    "tfidf_of",
]

BASE_FEATURES = (
    "recall_score",
    "cosine",
    "gap_to_top",
    "log_rank",
    "domain",
    "preferred",
    "tfidf",
    "token_overlap",
    "exact",
)
FEATURES = (*BASE_FEATURES, "ranker_logit")
_EPS = 1e-6


class RankerLike(Protocol):
    """What the combiner needs of a ranker: probabilities per mention's candidates."""

    def score_batch(
        self, mentions: Sequence[str], candidate_lists: Sequence[Sequence[Candidate]]
    ) -> list[np.ndarray]:
        """One probability array per mention, in candidate order."""
        ...


def _tokens(text: str) -> set[str]:
    return set(normalize_text(text).split())


_TFIDF_OF_SPACE: weakref.WeakKeyDictionary[SearchSpace, dict[bool, TfidfMatcher]] = (
    weakref.WeakKeyDictionary()
)
_TFIDF_LOCK = threading.Lock()


def tfidf_of(recall: RowMatcher) -> TfidfMatcher:
    """The TF-IDF matcher over ``recall``'s texts: a hybrid recall's own sparse side, else one
    fitted on its space's index terms and domain synonyms (once per space: the service builds
    a ranked matcher per request)."""
    if isinstance(recall, HybridMatcher):
        return recall.sparse
    if isinstance(recall, SpaceMatcher):
        domain = recall.config.strategy.needs_domain
        with _TFIDF_LOCK:
            fitted = _TFIDF_OF_SPACE.setdefault(recall.space, {})
            if domain not in fitted:
                fitted[domain] = TfidfMatcher(space_kg(recall.space, domain))
            return fitted[domain]
    raise TypeError(f"the combiner reads a strategy or hybrid recall, not {type(recall).__name__}")


def candidate_features(
    query: str,
    candidates: Sequence[Candidate],
    tfidf: TfidfMatcher,
    ranker_probs: np.ndarray | None = None,
) -> np.ndarray:
    """float64 ``[len(candidates), F]``: :data:`BASE_FEATURES`, plus ``ranker_logit`` when
    ``ranker_probs`` is given (module doc)."""
    n = len(candidates)
    scores = np.array([c.score for c in candidates], dtype=np.float64)
    cosines = np.array(
        [c.score if c.recall_score is None else c.recall_score for c in candidates],
        dtype=np.float64,
    )
    q_norm = normalize_text(query)
    q_tokens = set(q_norm.split())
    overlap = np.zeros(n)
    exact = np.zeros(n)
    for i, c in enumerate(candidates):
        t = _tokens(c.matched_term)
        union = q_tokens | t
        overlap[i] = len(q_tokens & t) / len(union) if union else 0.0
        exact[i] = float(normalize_text(c.matched_term) == q_norm)
    columns = [
        scores,
        cosines,
        (scores.max() if n else 0.0) - scores,
        np.log(np.arange(1, n + 1, dtype=np.float64)),
        np.array([c.source == Source.DOMAIN.value for c in candidates], dtype=np.float64),
        np.array(
            [c.is_preferred or is_name(c.matched_term, c.name) for c in candidates],
            dtype=np.float64,
        ),
        tfidf.concept_scores(query, [c.concept_id for c in candidates]).astype(np.float64),
        overlap,
        exact,
    ]
    if ranker_probs is not None:
        p = np.clip(np.asarray(ranker_probs, dtype=np.float64), _EPS, 1 - _EPS)
        columns.append(np.log(p / (1 - p)))
    return np.stack(columns, axis=1) if n else np.zeros((0, len(columns)))


def feature_rows(
    queries: Sequence[str],
    lists: Sequence[Sequence[Candidate]],
    tfidf: TfidfMatcher,
    ranker: RankerLike | None,
) -> list[tuple[np.ndarray, np.ndarray | None]]:
    """Per query: its candidates' :func:`candidate_features` and the ranker's probabilities
    (``None`` without a ranker)."""
    probs: Sequence[np.ndarray | None] = (
        ranker.score_batch(queries, lists) if ranker is not None else [None] * len(lists)
    )
    return [
        (candidate_features(q, c, tfidf, p), p)
        for q, c, p in zip(queries, lists, probs, strict=True)
    ]


def reorder(
    candidates: Sequence[Candidate], scores: np.ndarray, probs: np.ndarray | None
) -> tuple[list[Candidate], np.ndarray]:
    """Candidates sorted by ``scores`` (stable: ties keep the recall order), each with its
    recall score, ranker score (``probs``) and new score; and the sorted scores."""
    order = np.argsort(-scores, kind="stable")
    ranked = [
        candidates[i]._replace(
            score=float(scores[i]),
            rank=rank,
            recall_score=candidates[i].score,
            ranker_score=None if probs is None else float(probs[i]),
        )
        for rank, i in enumerate(order, start=1)
    ]
    return ranked, scores[order]


@dataclass(frozen=True)
class Combiner:
    """A fitted logistic regression over named, standardized features (module doc)."""

    names: tuple[str, ...]
    mean: np.ndarray
    scale: np.ndarray
    coef: np.ndarray
    intercept: float

    @property
    def uses_ranker(self) -> bool:
        """Whether the ranker's logit is a feature."""
        return "ranker_logit" in self.names

    def predict(self, features: np.ndarray) -> np.ndarray:
        """P(correct) per row of ``features`` ``[n, F]``."""
        if features.shape[1] != len(self.names):
            raise ValueError(f"{features.shape[1]} features, the combiner has {len(self.names)}")
        z = self.intercept + ((features - self.mean) / self.scale) @ self.coef
        return 1.0 / (1.0 + np.exp(-z))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (plain lists)."""
        return {
            "features": list(self.names),
            "mean": self.mean.tolist(),
            "scale": self.scale.tolist(),
            "coef": self.coef.tolist(),
            "intercept": self.intercept,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Combiner:
        """Inverse of :meth:`to_dict`."""
        return cls(
            tuple(data["features"]),
            np.asarray(data["mean"], dtype=np.float64),
            np.asarray(data["scale"], dtype=np.float64),
            np.asarray(data["coef"], dtype=np.float64),
            float(data["intercept"]),
        )


def fit_combiner(
    features: np.ndarray, labels: np.ndarray, names: Sequence[str], c: float = 1.0
) -> Combiner:
    """Logistic regression of ``labels`` (0/1) on standardized ``features`` ``[n, F]``."""
    from sklearn.linear_model import LogisticRegression

    y = np.asarray(labels, dtype=np.int64)
    if len(np.unique(y)) < 2:
        raise ValueError("the combiner needs both correct and wrong training candidates")
    mean = features.mean(axis=0)
    scale = features.std(axis=0)
    scale[scale < _EPS] = 1.0
    model = LogisticRegression(C=c, max_iter=1000)
    model.fit((features - mean) / scale, y)
    return Combiner(
        tuple(names), mean, scale, model.coef_[0].astype(np.float64), float(model.intercept_[0])
    )
