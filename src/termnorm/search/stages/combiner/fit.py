"""Fitting the learned combiner on cross-fitted training candidates: ``termnorm rank combine``.

Each fold's recall stage (:mod:`termnorm.search.stages.crossfit`) returns ``k_c`` candidates
per query; each becomes a feature row
(:func:`~termnorm.search.stages.combiner.model.candidate_features`, with the ranker's logit
when a ranker is given) labelled 1 when it is a gold concept, and the logistic regression is
fitted on all rows. The JSON card holds its numbers, the recall configuration, the index
identity and the training acc@1 of recall and combiner, with the top candidate's ECE.

**Stacking.** A ranker scores its own training mentions better than unseen ones, so a
combiner fitted on them trusts it too much. A ranker trained with ``--holdout F`` lists the
documents it did not train on, and the combiner is fitted on those documents' mentions only;
a ranker without held-out documents is used in-sample, with a warning and
``ranker_in_sample: true`` on the card.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from termnorm.search.build import fit_recall
from termnorm.search.candidate import Candidate
from termnorm.search.domain import SearchSpace
from termnorm.search.stages.cards import recall_settings, write_json_card
from termnorm.search.stages.combiner.calibration import expected_calibration_error
from termnorm.search.stages.combiner.card import CARD_KIND
from termnorm.search.stages.combiner.model import (
    BASE_FEATURES,
    FEATURES,
    Combiner,
    RankerLike,
    feature_rows,
    fit_combiner,
    tfidf_of,
)
from termnorm.search.stages.crossfit import (
    Query,
    TrainingData,
    crossfit_map,
    gold_hits,
    load_training_data,
    training_space,
)
from termnorm.search.stages.fit_spec import TrainingDataSpec

__all__ = ["CombinerFitSpec", "fit_combiner_card", "fit_on_queries"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class CombinerFitSpec(TrainingDataSpec):
    """The data and recall of :class:`~termnorm.search.stages.fit_spec.TrainingDataSpec`
    (``hybrid``: a hybrid recall card; ``k_c`` candidates per query; ``ranker``: a ranker
    folder whose logit is a feature) and ``c``, the inverse L2 strength."""

    c: float = 1.0


def fit_combiner_card(
    spec: CombinerFitSpec, out: str | Path, ranker: RankerLike | None = None
) -> dict[str, Any]:
    """Fit the combiner (module doc), write its card to ``out`` and return the card.
    ``ranker``: a loaded ranker (else ``spec.ranker`` is loaded when given)."""
    from termnorm.search.stages.ranker.ranker import load_ranker

    space = training_space(spec)
    held: frozenset[str] = frozenset()
    if ranker is None and spec.ranker is not None:
        loaded = load_ranker(spec.ranker, threads=spec.threads)
        held = frozenset((loaded.card.get("holdout") or {}).get("documents", ()))
        ranker = loaded
    data = load_training_data(spec)
    queries = _stacking_queries(data.queries, held, ranker is not None)
    combiner, metrics = fit_on_queries(spec, space, data, queries, ranker, spec.c)
    card = {
        "kind": CARD_KIND,
        "combiner": combiner.to_dict(),
        "k_c": spec.k_c,
        **recall_settings(spec, space.index),
        "hybrid": None if spec.hybrid is None else str(Path(spec.hybrid).resolve()),
        "ranker": None if spec.ranker is None else str(Path(spec.ranker).resolve()),
        "ranker_in_sample": ranker is not None and not held,
        "metrics": metrics,
    }
    write_json_card(out, card)
    return card


def fit_on_queries(
    spec: TrainingDataSpec,
    space: SearchSpace,
    data: TrainingData,
    queries: Sequence[Query],
    ranker: RankerLike | None = None,
    c: float = 1.0,
) -> tuple[Combiner, dict[str, float]]:
    """The combiner (inverse L2 strength ``c``) fitted on the cross-fitted candidates of
    ``queries`` as ``spec`` recalls them (module doc) and its training metrics (``queries``,
    ``rows``, training acc@1 of recall and combiner, ECE)."""

    def run(fold_space: SearchSpace, texts: list[str]) -> list[tuple[list[Candidate], np.ndarray]]:
        recall = fit_recall(spec, fold_space, "combiner")
        lists = [r.candidates for r in recall.normalize_rows(texts, spec.k_c)]
        features = feature_rows(texts, lists, tfidf_of(recall), ranker)
        return [(c, x) for c, (x, _p) in zip(lists, features, strict=True)]

    answers = crossfit_map(space, queries, run, data.fixed, data.crossfit, spec.folds, spec.seed)
    hits = gold_hits(queries, [c for c, _x in answers], space.index)
    names = FEATURES if ranker is not None else BASE_FEATURES
    x = np.concatenate([f for _c, f in answers if len(f)])
    y = np.concatenate([np.asarray(h, dtype=np.int64) for h in hits if h])
    combiner = fit_combiner(x, y, names, c)
    metrics = {"queries": len(queries), "rows": len(y), **_train_metrics(combiner, answers, hits)}
    return combiner, metrics


def _stacking_queries(
    queries: Sequence[Query], held: frozenset[str], with_ranker: bool
) -> list[Query]:
    """The queries the combiner is fitted on (module doc, "Stacking")."""
    if not with_ranker:
        return list(queries)
    if not held:
        logger.warning(
            "the ranker was trained on these mentions (no --holdout): the combiner will trust "
            "its in-sample scores more than it should; retrain it with --holdout 0.2"
        )
        return list(queries)
    kept = [q for q in queries if q.doc_id in held]
    if not kept:
        raise ValueError(
            f"none of these mentions comes from the ranker's {len(held)} held-out documents: "
            "fit the combiner with the same --mentions the ranker was trained with"
        )
    return kept


def _train_metrics(
    combiner: Combiner,
    answers: Sequence[tuple[list[Candidate], np.ndarray]],
    hits: Sequence[Sequence[bool]],
) -> dict[str, float]:
    recall_right = combined_right = 0
    top_p: list[float] = []
    top_ok: list[bool] = []
    for (_c, x), h in zip(answers, hits, strict=True):
        if not h:
            continue
        p = combiner.predict(x)
        best = int(np.argmax(p))
        recall_right += bool(h[0])
        combined_right += bool(h[best])
        top_p.append(float(p[best]))
        top_ok.append(bool(h[best]))
    n = max(1, len(answers))
    return {
        "train_acc_at_1_recall": recall_right / n,
        "train_acc_at_1": combined_right / n,
        "train_ece_top1": expected_calibration_error(np.array(top_p), np.array(top_ok)),
    }
