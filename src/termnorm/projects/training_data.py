"""A mapping project's review decisions as the ranker's training data:
``termnorm rank train --project PROJECT``.

Every row a reviewer approved or picked a concept for
(:func:`~termnorm.projects.decisions.reviewed_rows`: not auto-approved, not retired) is a
training query: its text, the chosen concept as gold, its code as its document. Its
candidates are recalled afresh with the ranker's search, as for annotated mentions (the
stored ones came from the pipeline as it was when the row was mapped, perhaps with an older
ranker; training needs the lists the recall gives now). The project's approved exact
mappings are its own domain synonyms (what ``map run`` searches); they are cross-fitted by
row, so a query never finds its own entry, and the project's synonym files (and any
``--synonyms``) are searched by every query.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path

from termnorm.mentions.synonyms import read_synonyms
from termnorm.projects.decisions import reviewed_rows
from termnorm.projects.settings import PipelineSettings
from termnorm.projects.states import Predicate
from termnorm.projects.store import DEFAULT_BUSY_TIMEOUT, DatabaseLike, open_project
from termnorm.search.defaults import default_strategy
from termnorm.search.stages.crossfit import Pair, Query, TrainingData, sample_queries
from termnorm.search.stages.ranker.train_spec import RankTrainSpec
from termnorm.search.stages.ranker.training import train_ranker

__all__ = ["project_training_data", "train_project_ranker"]

logger = logging.getLogger(__name__)


def project_training_data(
    project: str,
    db: DatabaseLike = None,
    synonyms: tuple[Path, ...] = (),
    max_queries: int | None = None,
    seed: int = 0,
    busy_timeout: float = DEFAULT_BUSY_TIMEOUT,
) -> tuple[TrainingData, PipelineSettings]:
    """The project's decisions as training data (module doc) and its pipeline settings.
    ``synonyms``: synonym files searched besides the project's; ``max_queries``: a seeded
    sample of that many queries.

    Raises:
        ValueError: no row has a reviewer's decision yet.
    """
    with open_project(project, db, busy_timeout=busy_timeout) as (_, session, proj):
        settings = PipelineSettings.from_row(proj)
        rows = reviewed_rows(session, proj.id)
    if not rows:
        raise ValueError(
            f"project {project!r} has no reviewed row to train on: approve or pick concepts "
            "first (termnorm map decide / the review page)"
        )
    unique: dict[tuple[str, tuple[str, ...]], Query] = {}
    for r in rows:
        unique.setdefault((r.text, (r.concept_id,)), Query(r.text, (r.concept_id,), r.code))
    queries = sample_queries(list(unique.values()), max_queries, seed)
    crossfit: list[tuple[str, Pair]] = [
        (r.code, (r.text, (r.concept_id,))) for r in rows if r.predicate == Predicate.EXACT.value
    ]
    files = [*settings.spec.synonyms, *synonyms]
    fixed = [pair for path in files for pair in read_synonyms(path)]
    cards = [{"project": project, "format": "project", "mentions": len(rows)}]
    synonym_cards = [{"path": str(path), "cross_fitted": False} for path in files]
    synonym_cards.append({"project": project, "cross_fitted": True, "pairs": len(crossfit)})
    logger.info("%s: %d reviewed rows, %d queries", project, len(rows), len(queries))
    return TrainingData(queries, fixed, crossfit, cards, synonym_cards), settings


def train_project_ranker(
    project: str,
    spec: RankTrainSpec,
    out: str | Path,
    db: DatabaseLike = None,
    show_progress: bool = False,
) -> Path:
    """``termnorm rank train --project PROJECT``: a ranker trained on the project's decisions
    (module doc) with ``spec``'s settings. Without ``spec.index`` the index is the project's,
    without ``spec.strategy`` its spec's strategy and sieve threshold.

    Raises:
        ValueError: ``spec`` also names mention files, or an index other than the one the
            project maps with, or the project has no reviewed row.
    """
    if spec.mentions:
        raise ValueError("train on a project's decisions or on mention files, not both")
    data, settings = project_training_data(project, db, spec.synonyms, spec.max_queries, spec.seed)
    mapped = settings.spec
    if spec.index is None:
        spec = replace(spec, index=mapped.index)
    elif mapped.index is not None and mapped.index.resolve() != spec.index.resolve():
        raise ValueError(
            f"project {project!r} maps with the index {mapped.index}: train its ranker on "
            f"that index (--index {mapped.index})"
        )
    if spec.strategy is None:
        spec = replace(spec, strategy=mapped.strategy, sieve_threshold=mapped.sieve_threshold)
    searched = bool(data.fixed or data.crossfit)  # the approved mappings: domain synonyms
    strategy = spec.strategy or default_strategy(searched)
    return train_ranker(replace(spec, strategy=strategy), out, show_progress, data=data)
