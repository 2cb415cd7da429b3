"""``termnorm map run``: give every row still to map its top-k candidates, in batches.

Resumable by construction: a batch is searched, then written in one transaction (a
compare-and-set on each row's version), so an interrupted run (Ctrl-C, ``kill -9``) leaves
every row mapped or still to map, never half; running again maps the rest. A row a reviewer
decided meanwhile keeps the decision.

The matcher is ``build(spec, synonyms)`` (the faces pass :func:`termnorm.api.project_matcher`:
:func:`termnorm.search.build.build` of the project's spec, its approved exact mappings added
as domain synonyms, :func:`~termnorm.projects.decisions.learned_synonyms`). A strategy that
searches domain synonyms waits for the first of them: until then the spec is searched with
no strategy named. ``engine="ray"`` searches each batch on Ray actors while this process
alone writes (:mod:`termnorm.projects.ray_run`), so resume stays exact.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlalchemy import bindparam, delete, func, insert, select, update
from tqdm.auto import tqdm

from termnorm.engines import Engine
from termnorm.projects.decisions import learned_synonyms
from termnorm.projects.models import Base, CandidateRow, JsonReady, SourceRow, utcnow
from termnorm.projects.settings import MatcherBuilder, PipelineSettings, ProjectSource
from termnorm.projects.source import check_unchanged
from termnorm.projects.states import RowState
from termnorm.projects.store import DEFAULT_BUSY_TIMEOUT, DatabaseLike, Store, using_store
from termnorm.search.spec import PipelineSpec
from termnorm.search.strategies import parse_strategy

if TYPE_CHECKING:
    from termnorm.projects.ray_run import RayRowMatcher
    from termnorm.search.candidate import RowMatcher, RowResult

__all__ = ["DEFAULT_BATCH_ROWS", "MatcherBuilder", "RunReport", "run_project", "searched_spec"]

logger = logging.getLogger(__name__)

DEFAULT_BATCH_ROWS = 256
"""Rows searched and written per transaction."""
MAX_BATCH_ROWS = 10_000
"""The most rows per batch (a batch's IDs are bound as one SQL ``IN`` list)."""


@dataclass
class RunReport(JsonReady):
    """What :func:`run_project` did: rows ``mapped`` (``errors`` of them without candidates,
    the reason kept in the row), rows ``remapped`` (re-searched while still to review), the
    ``synonyms`` learned from decisions that the search used, and rows ``left`` to map."""

    project: str
    mapped: int = 0
    remapped: int = 0
    errors: int = 0
    synonyms: int = 0
    left: int = 0


_ROWS = Base.metadata.tables[SourceRow.__tablename__]
_CANDIDATES = Base.metadata.tables[CandidateRow.__tablename__]
_MOVE = (
    update(_ROWS)
    .where(_ROWS.c.id == bindparam("row_id"))
    .values(
        state=RowState.TO_REVIEW.value,
        version=bindparam("new_version"),
        map_error=bindparam("why"),
        updated_at=bindparam("now"),
    )
)


def _write_batch(
    store: Store, rows: list[tuple[int, int, str]], results: list[RowResult], expected: str
) -> tuple[int, int]:
    """Store each row's candidates if the row is still at the version searched and in state
    ``expected``, in one transaction: the rows are read locked (``FOR UPDATE`` on
    PostgreSQL; SQLite's writing session holds the database), then moved, their old
    candidates deleted and the new ones inserted, each as one statement. Returns (rows
    written, of them without candidates)."""
    now = utcnow()
    with store.session(write=True) as session:
        current = dict(
            session.execute(
                select(SourceRow.id, SourceRow.version)
                .where(SourceRow.id.in_([r[0] for r in rows]), SourceRow.state == expected)
                .with_for_update()
            ).all()
        )
        fresh = [
            (row_id, version, result)
            for (row_id, version, _text), result in zip(rows, results, strict=True)
            if current.get(row_id) == version  # else decided or changed meanwhile: left as is
        ]
        if not fresh:
            return 0, 0
        session.execute(
            _MOVE,
            [
                {
                    "row_id": row_id,
                    "new_version": version + 1,
                    "why": r.error or r.abstained,
                    "now": now,
                }
                for row_id, version, r in fresh
            ],
        )
        ids = [row_id for row_id, _v, _r in fresh]
        session.execute(delete(CandidateRow).where(CandidateRow.row_id.in_(ids)))
        candidates = [
            {
                "row_id": row_id,
                "rank": rank,
                "concept_id": c.concept_id,
                "name": c.name,
                "matched_text": c.matched_term,
                "source": c.source,
                "term_source": c.term_source,
                "score": float(c.score),
            }
            for row_id, _v, result in fresh
            for rank, c in enumerate(result.candidates, start=1)
        ]
        if candidates:
            session.execute(insert(_CANDIDATES), candidates)
    errors = sum((r.error or r.abstained) is not None for _i, _v, r in fresh)
    return len(fresh), errors


def _pending(
    store: Store, project_id: int, state: str, after: int, limit: int
) -> list[tuple[int, int, str]]:
    """``(id, version, text)`` of the next ``limit`` live rows in ``state`` after id ``after``."""
    with store.session() as session:
        query = (
            select(SourceRow.id, SourceRow.version, SourceRow.text)
            .where(
                SourceRow.project_id == project_id,
                SourceRow.state == state,
                SourceRow.retired.is_(False),
                SourceRow.id > after,
            )
            .order_by(SourceRow.id)
            .limit(limit)
        )
        return [(int(i), int(v), str(t)) for i, v, t in session.execute(query).all()]


def _count(store: Store, project_id: int, states: list[str]) -> int:
    with store.session() as session:
        query = select(func.count()).where(
            SourceRow.project_id == project_id,
            SourceRow.state.in_(states),
            SourceRow.retired.is_(False),
        )
        return int(session.scalar(query) or 0)


def searched_spec(spec: PipelineSpec, synonyms: Sequence[tuple[str, str]]) -> PipelineSpec:
    """The spec a run searches: ``spec``, but without its strategy while that strategy
    searches domain synonyms and the project has none yet (no synonym file, no approved
    mapping): ``build`` then searches the spec's default recall until the first approval."""
    waits = spec.strategy is not None and parse_strategy(spec.strategy).needs_domain
    if not waits or spec.synonyms or synonyms:
        return spec
    logger.info("strategy %s waits for the first approved mapping", spec.strategy)
    return spec.replace(strategy=None)


@contextlib.contextmanager
def _matcher(
    build: MatcherBuilder,
    spec: PipelineSpec,
    synonyms: Sequence[tuple[str, str]],
    engine: Engine,
    workers: int,
    address: str | None,
) -> Iterator[RowMatcher | RayRowMatcher]:
    """The search of a run: ``build``'s matcher here, or one on Ray actors
    (:mod:`termnorm.projects.ray_run`)."""
    if engine is Engine.LOCAL:
        yield build(spec, synonyms)
        return
    from termnorm.projects.ray_run import ray_matcher

    with ray_matcher(build, spec, synonyms, workers, address) as matcher:
        yield matcher


def run_project(
    project: str,
    build: MatcherBuilder,
    *,
    db: DatabaseLike = None,
    batch_rows: int = DEFAULT_BATCH_ROWS,
    remap: bool = False,
    show_progress: bool = True,
    check_source: bool = True,
    busy_timeout: float = DEFAULT_BUSY_TIMEOUT,
    engine: Engine | str = Engine.LOCAL,
    workers: int = 1,
    address: str | None = None,
    threads: int | None = None,
) -> RunReport:
    """Map every live row of ``project`` still to map (see the module); ``remap`` also
    re-searches the rows still to review, so that decisions made since they were mapped
    (learned synonyms) count. ``check_source``: refuse when the project's source file
    changed (:class:`~termnorm.errors.SourceChangedError`).

    ``engine="ray"``: the search runs on ``workers`` Ray actors (a local Ray, or the cluster
    at ``address``), each searching ``batch_rows`` rows of a batch of ``batch_rows ×
    workers`` that this process writes in one transaction (:mod:`~termnorm.projects.ray_run`);
    the rows and their candidates are the local engine's. ``threads``: the encoder's CPU
    threads for this run (``None``: the project's spec's), not stored in the project."""
    from termnorm.encoders.forward import check_threads

    if not 1 <= batch_rows <= MAX_BATCH_ROWS:
        raise ValueError(f"batch_rows must be 1 to {MAX_BATCH_ROWS}, got {batch_rows}")
    check_threads(threads)
    engine = Engine(engine)
    if workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")
    per_batch = min(batch_rows * workers, MAX_BATCH_ROWS) if engine is Engine.RAY else batch_rows
    with using_store(project, db, busy_timeout) as store:
        with store.session() as session:
            proj = store.project(session, project)
            project_id, settings = proj.id, PipelineSettings.from_row(proj)
            spec = settings.spec if threads is None else settings.spec.replace(threads=threads)
            source = ProjectSource.from_dict(proj.source)
            synonyms = learned_synonyms(session, project_id)
        if check_source:
            check_unchanged(project, source)
        states = [RowState.TO_MAP.value] + ([RowState.TO_REVIEW.value] if remap else [])
        report = RunReport(project, synonyms=len(synonyms))
        total = _count(store, project_id, states)
        if total == 0:
            logger.info("%s: no row to map", project)
            return report
        logger.info("%s: mapping %d rows (%d learned synonyms)", project, total, len(synonyms))
        with (
            _matcher(
                build, searched_spec(spec, synonyms), synonyms, engine, workers, address
            ) as matcher,
            tqdm(total=total, desc="mapping", unit="row", disable=not show_progress) as bar,
        ):
            for state in states:
                after = 0
                while rows := _pending(store, project_id, state, after, per_batch):
                    after = rows[-1][0]
                    results = matcher.normalize_rows([t for _i, _v, t in rows], settings.k)
                    written, errors = _write_batch(store, rows, results, state)
                    if state == RowState.TO_MAP.value:
                        report.mapped += written
                    else:
                        report.remapped += written
                    report.errors += errors
                    bar.update(len(rows))
        report.left = _count(store, project_id, [RowState.TO_MAP.value])
    logger.info(
        "%s: %d rows mapped, %d re-mapped (%d without candidates), %d left",
        project,
        report.mapped,
        report.remapped,
        report.errors,
        report.left,
    )
    return report
