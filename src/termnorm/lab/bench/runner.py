"""Run a benchmark suite: every model on every dataset its evaluator applies to, cached.

:func:`run_bench` returns :class:`BenchResults` (one :class:`Cell` per model × dataset, plus
t-SNE layouts); :func:`termnorm.lab.bench.report.write_report` renders them. A cell
that cannot run (a baseline on an embedding task, link prediction without a relation head)
is kept with a ``note``; an evaluator that fails is kept with its ``error`` and the suite
goes on. What the cells share (KGs, the model's memo encoder and indexes) lives in a
:class:`~termnorm.lab.bench.session.BenchSession`; each cell's evaluator is run by
:func:`termnorm.lab.bench.tasks.run_task`.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from termnorm._version import __version__
from termnorm.lab.bench.cache import ResultCache, content_hash
from termnorm.lab.bench.session import BenchSession
from termnorm.lab.bench.spec import BenchSpec, DatasetSpec, EvaluatorKind, ModelSpec, TsneSpec
from termnorm.lab.bench.tasks import run_task
from termnorm.paths import cache_dir as default_cache_dir

__all__ = ["BenchResults", "Cell", "run_bench"]

logger = logging.getLogger(__name__)


@dataclass
class Cell:
    """One model on one dataset."""

    model: str
    dataset: str
    evaluator: str
    metrics: dict[str, float] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    cached: bool = False
    note: str | None = None
    error: str | None = None


@dataclass
class BenchResults:
    """Everything a report needs."""

    spec: BenchSpec
    cells: list[Cell]
    tsne: dict[str, dict[str, Any]]
    wall_seconds: float
    cache_hits: int
    cache_misses: int

    def cell(self, model: str, dataset: str) -> Cell | None:
        """The cell of ``model`` on ``dataset``."""
        return next((c for c in self.cells if c.model == model and c.dataset == dataset), None)


def _model_fingerprint(model: ModelSpec) -> str:
    if model.baseline is not None:
        return f"baseline-{model.baseline}-{__version__}"
    from termnorm.encoders import Pooling, default_model_path, folder_pooling, model_fingerprint

    path = model.path or default_model_path()
    pooling = Pooling(model.pooling) if model.pooling else (folder_pooling(path) or Pooling.MEAN)
    return model_fingerprint(path, pooling)


def _head_hash(model: ModelSpec, ds: DatasetSpec) -> str | None:
    """Content of the relation head for link prediction (the encoder's fingerprint does not
    cover ``relations/``), else ``None``."""
    if ds.evaluator is not EvaluatorKind.LINKPRED:
        return None
    from termnorm.encoders import default_model_path

    return content_hash((model.path or default_model_path()) / "relations")


def _applicable(model: ModelSpec, ds: DatasetSpec) -> str | None:
    """Why ``model`` does not run on ``ds`` (``None`` when it does)."""
    if model.baseline is not None and not ds.evaluator.takes_baselines:
        return "baselines have no vectors"
    if ds.evaluator is EvaluatorKind.LINKPRED:
        from termnorm.encoders import default_model_path

        path = model.path or default_model_path()
        if not (path / "relations" / "config.json").is_file():
            return "no relation head"
    return None


def run_bench(
    spec: BenchSpec,
    cache_dir: Path | None = None,
    force: bool = False,
    show_progress: bool = False,
) -> BenchResults:
    """Evaluate the suite, reading and writing the result cache (``force``: ignore it)."""
    started = time.perf_counter()
    cache = ResultCache(cache_dir or default_cache_dir() / "bench", enabled=not force)
    session = BenchSession(spec, cache, show_progress)
    cells: list[Cell] = []
    tsne: dict[str, dict[str, Any]] = {}
    for model in spec.models:
        fingerprint = _model_fingerprint(model)
        for ds in spec.datasets:
            cell = Cell(model.name, ds.name, ds.evaluator.value)
            cells.append(cell)
            cell.note = _applicable(model, ds)
            if cell.note is not None:
                continue
            key = ResultCache.key(
                fingerprint, _head_hash(model, ds), session.dataset_key(ds), ds.options
            )
            record = cache.get(key)
            if record is None:
                record = _compute(session, model, ds)
                if record.get("error") is None:
                    cache.put(key, record)
            else:
                record["cached"] = True
            _fill(cell, record)
        if spec.tsne is not None and model.baseline is None:
            tsne[model.name] = _tsne(session, model, fingerprint, spec.tsne)
        session.clear_model()
    return BenchResults(spec, cells, tsne, time.perf_counter() - started, cache.hits, cache.misses)


def _compute(session: BenchSession, model: ModelSpec, ds: DatasetSpec) -> dict[str, Any]:
    # a model that does not load stops the suite; a failing evaluator fails its cell only
    encoder = session.encoder(model) if model.baseline is None else None
    logger.info("evaluating %s on %s (%s)", model.name, ds.name, ds.evaluator.value)
    start = time.perf_counter()
    try:
        metrics, details = run_task(session, model, encoder, ds)
    except Exception as exc:  # one failing cell must not sink the suite
        logger.warning("%s on %s failed: %s", model.name, ds.name, exc)
        return {"error": f"{type(exc).__name__}: {exc}", "seconds": time.perf_counter() - start}
    return {"metrics": metrics, "details": details, "seconds": time.perf_counter() - start}


def _fill(cell: Cell, record: dict[str, Any]) -> None:
    cell.metrics = {k: float(v) for k, v in record.get("metrics", {}).items()}
    cell.details = record.get("details", {})
    cell.seconds = float(record.get("seconds", 0.0))
    cell.cached = bool(record.get("cached", False))
    cell.error = record.get("error")


def _tsne(
    session: BenchSession, model: ModelSpec, fingerprint: str, spec: TsneSpec
) -> dict[str, Any]:
    from termnorm.lab.bench.projection import tsne_layout

    kg = session.kg(spec.kg)
    key = ResultCache.key("tsne", fingerprint, kg.fingerprint, spec.__dict__)
    record = session.cache.get(key)
    if record is None:
        record = tsne_layout(kg, session.encoder(model), spec)
        session.cache.put(key, record)
    return record
