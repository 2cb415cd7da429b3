"""Training a ranker on the candidates the recall stage really returns: ``termnorm rank train``.

The training pairs come from the **same search configuration used at inference**: the
index, its recall model, the strategy (e.g. D-T+OD-T) and its domain synonyms, the
abbreviations of each mention's document; the queries and their cross-fitting are
:mod:`termnorm.search.stages.crossfit`'s. The recall stage returns ``k_c`` candidates per
query; each gives a pair (query, :func:`candidate_text`) labelled 1 when the candidate is one
of the mention's gold concepts (its ID or an alternative ID), else 0 (paper §3.2).

:func:`train_ranker` then trains the cross-encoder (:mod:`termnorm.search.stages.ranker.train_loop`) and
writes the ranker folder (:func:`~termnorm.search.stages.ranker.ranker.save_ranker`) whose card says
which index, recall model, strategy, k_c, keyword file and data made it.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from termnorm._artifacts import file_sha256
from termnorm.encoders.fingerprint import model_fingerprint
from termnorm.encoders.transformer import default_model_path
from termnorm.index.term_index import TermIndex
from termnorm.kg.keywords import builtin_keywords_path, read_keywords
from termnorm.search.candidate import Candidate
from termnorm.search.domain import SearchSpace
from termnorm.search.stages.cards import fitted_index
from termnorm.search.stages.crossfit import (
    Query,
    TrainingData,
    gold_hits,
    holdout_documents,
    load_training_data,
    recall_candidates,
    training_space,
)
from termnorm.search.stages.ranker.cross_encoder import KeywordCrossEncoder
from termnorm.search.stages.ranker.ranker import Ranker, save_ranker
from termnorm.search.stages.ranker.texts import candidate_text
from termnorm.search.stages.ranker.train_loop import RankPair, train_cross_encoder
from termnorm.search.stages.ranker.train_spec import RankTrainSpec
from termnorm.search.strategies import parse_strategy

__all__ = ["train_ranker", "training_pairs"]

logger = logging.getLogger(__name__)


def training_pairs(
    queries: Sequence[Query],
    candidate_lists: Sequence[Sequence[Candidate]],
    index: TermIndex,
) -> tuple[list[RankPair], dict[str, float]]:
    """Labelled pairs (module doc) and recall statistics of the training queries:
    ``recall_at_1``, ``recall_at_k_c`` (the share of queries with a gold candidate first /
    anywhere), ``queries``, ``pairs``, ``positives``."""
    pairs: list[RankPair] = []
    first = anywhere = 0
    for q, (query, candidates, hits) in enumerate(
        zip(queries, candidate_lists, gold_hits(queries, candidate_lists, index), strict=True)
    ):
        first += bool(hits and hits[0])
        anywhere += any(hits)
        pairs.extend(
            RankPair(query.text, candidate_text(c), 1.0 if hit else 0.0, q)
            for c, hit in zip(candidates, hits, strict=True)
        )
    n = max(1, len(queries))
    stats = {
        "queries": float(len(queries)),
        "pairs": float(len(pairs)),
        "positives": float(sum(p.label > 0.5 for p in pairs)),
        "recall_at_1": first / n,
        "recall_at_k_c": anywhere / n,
    }
    return pairs, stats


def train_ranker(
    spec: RankTrainSpec,
    out: str | Path,
    show_progress: bool = False,
    data: TrainingData | None = None,
) -> Path:
    """Recall the training candidates, train the cross-encoder, write the ranker folder:
    ``termnorm rank train``. ``data``: training queries and synonyms made elsewhere (a
    mapping project's decisions, ``termnorm.projects.train_project_ranker``) instead of
    ``spec.mentions``' files.

    Raises:
        ValueError: a bad setting, or no training data at all.
    """
    spec.train.validate()
    if spec.k_c < 1 or spec.folds < 2:
        raise ValueError("k_c must be >= 1 and folds >= 2")
    if data is None and not spec.mentions:
        raise ValueError(
            "no training data: give annotated mentions (--mentions FILE) or a mapping "
            "project whose reviewers decided rows (--project NAME)"
        )
    keywords_file = None if spec.plain else (spec.keywords or builtin_keywords_path(spec.lang))
    keywords = read_keywords(keywords_file) if keywords_file is not None else None
    space = training_space(spec)
    index = space.index
    data = load_training_data(spec) if data is None else data
    held = holdout_documents((q.doc_id for q in data.queries), spec.holdout, spec.seed)
    queries = [q for q in data.queries if q.doc_id not in held]
    logger.info(
        "recalling %d training queries with %s (k_c=%d; %d documents held out)",
        len(queries),
        spec.resolved_strategy,
        spec.k_c,
        len(held),
    )
    pairs, recall_stats = training_pairs(
        queries, recall_candidates(spec, space, queries, data), index
    )
    if held:
        _check_holdout(spec, space, data, held)

    base = spec.base_model or default_model_path()
    model = KeywordCrossEncoder.from_pretrained(
        base, keywords, spec.plain, spec.max_length, seed=spec.seed
    )
    if spec.freeze_embeddings:
        model.model.get_input_embeddings().weight.requires_grad_(False)
    stats = train_cross_encoder(model, pairs, replace(spec.train, seed=spec.seed), show_progress)
    stacked = _stacked_combiner(spec, space, data, held, model)
    card = {
        "base_model": {"path": str(Path(base).resolve()), "fingerprint": model_fingerprint(base)},
        "index": fitted_index(index),
        "recall_model": index.card["model"].get("path"),
        "strategy": str(parse_strategy(spec.resolved_strategy)),
        "sieve_threshold": spec.sieve_threshold,
        "k_c": spec.k_c,
        "max_length": spec.max_length,
        "synonyms": data.synonym_cards,
        "cross_fitting": {"folds": spec.folds, "seed": spec.seed} if data.crossfit else None,
        "holdout": {"fraction": spec.holdout, "seed": spec.seed, "documents": sorted(held)},
        "training_data": data.cards,
        "training": {
            **spec.train.to_dict(),
            "seed": spec.seed,
            "max_queries": spec.max_queries,
            "freeze_embeddings": spec.freeze_embeddings,
        },
        "metrics": {**recall_stats, **stats.to_dict()},
        "combiner": stacked,
    }
    if keywords_file is not None:
        card["keywords_lang"] = keywords.lang if keywords is not None else None
        card["keywords_sha256"] = file_sha256(keywords_file, chars=64)
    return save_ranker(model, card, out, keywords_file)


def _check_holdout(
    spec: RankTrainSpec, space: SearchSpace, data: TrainingData, held: frozenset[str]
) -> None:
    """Before training: ``ValueError`` when the held-out documents' candidates cannot fit the
    combiner (it needs correct and wrong candidates), so no training time is lost."""
    queries = [q for q in data.queries if q.doc_id in held]
    lists = recall_candidates(spec, space, queries, data)
    labels = {hit for hits in gold_hits(queries, lists, space.index) for hit in hits}
    if labels != {True, False}:
        raise ValueError(
            f"the {len(held)} held-out documents ({len(queries)} queries) give "
            f"{'no correct' if True not in labels else 'no wrong'} candidate to fit the "
            "combiner on: hold out more (--holdout) or train without a combiner (--holdout 0)"
        )


def _stacked_combiner(
    spec: RankTrainSpec,
    space: SearchSpace,
    data: TrainingData,
    held: frozenset[str],
    model: KeywordCrossEncoder,
) -> dict[str, Any] | None:
    """The learned combiner fitted on the held-out documents' queries with the trained
    ranker's scores (:func:`~termnorm.search.stages.combiner.fit.fit_on_queries`), as the
    card's ``combiner`` entry; ``None`` without held-out documents."""
    if not held:
        return None
    from termnorm.search.stages.combiner.fit import fit_on_queries

    queries = [q for q in data.queries if q.doc_id in held]
    logger.info("fitting the combiner on %d held-out queries", len(queries))
    ranker = Ranker(model, {"kind": "in-training"})
    combiner, metrics = fit_on_queries(spec, space, data, queries, ranker)
    return {"combiner": combiner.to_dict(), "k_c": spec.k_c, "metrics": metrics}
