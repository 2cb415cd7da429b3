"""The benchmark suite file read by ``termnorm bench SPEC.yaml``.

A suite declares models, knowledge graphs and datasets; every model runs on every dataset
whose evaluator applies to it (lexical baselines on normalization datasets only, link
prediction only for models saved with a relation head)::

    name: dev
    data_root: ../../shared/benchmarks     # relative to this file; dataset paths below it
    models:
      base: default                        # the built-in default model
      coder: {path: ../models/coder, pooling: cls}   # relative to this file
    baselines: [exact, tfidf, edit]
    kgs:
      medic: {format: medic, path: medic/medic_06Jul2012.txt}
      hpo: {format: hpo}                   # no path: the built-in file
    datasets:
      ncbi-devel: {evaluator: normalization, path: ncbi_disease/NCBIdevelopset_corpus.txt, kg: medic}
      cadec-0: {evaluator: zero-shot, path: cadec/CADEC_0}
      mayosrs: {evaluator: relatedness, path: mayosrs/MiniMayoSRS.csv}
      hpo-mcsm: {evaluator: mcsm, kg: hpo, options: {max_concepts_per_type: 300}}
    tsne: {kg: hpo, concepts: 30, types: 8, per_type: 40}

``options`` are passed to the evaluator's constructor (see each evaluator's docstring);
normalization datasets also take ``format`` (mention format, detected when absent) and
``mode`` (``term`` or ``concept`` search). Every problem is reported with the file's name.
Reading a suite needs PyYAML (the ``lab`` extra).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from termnorm.errors import InputFormatError, MissingExtraError

__all__ = [
    "BASELINES",
    "BenchSpec",
    "DatasetSpec",
    "EvaluatorKind",
    "KGSpec",
    "ModelSpec",
    "TsneSpec",
    "load_spec",
]

BASELINES = ("exact", "tfidf", "edit")
DEFAULT_MODEL = "default"


class EvaluatorKind(str, Enum):
    """The evaluators a dataset can name."""

    NORMALIZATION = "normalization"
    ZERO_SHOT = "zero-shot"
    MCSM = "mcsm"
    RELATION = "relation"
    CLUSTERING = "clustering"
    RELATEDNESS = "relatedness"
    LINKPRED = "linkpred"

    @property
    def needs_kg(self) -> bool:
        """Whether the dataset must name a KG of the suite."""
        return self not in {EvaluatorKind.ZERO_SHOT, EvaluatorKind.RELATEDNESS}

    @property
    def needs_path(self) -> bool:
        """Whether the dataset must name a file or folder."""
        return self in {
            EvaluatorKind.NORMALIZATION,
            EvaluatorKind.ZERO_SHOT,
            EvaluatorKind.RELATEDNESS,
        }

    @property
    def takes_baselines(self) -> bool:
        """Lexical baselines only match mentions; they have no vectors."""
        return self in {EvaluatorKind.NORMALIZATION, EvaluatorKind.ZERO_SHOT}


@dataclass(frozen=True)
class ModelSpec:
    """An encoder folder (``path=None``: the built-in default) or a lexical baseline."""

    name: str
    path: Path | None = None
    pooling: str | None = None
    baseline: str | None = None


@dataclass(frozen=True)
class KGSpec:
    """A KG built from one terminology source (see ``termnorm kg build``), or a KG folder."""

    name: str
    format: str | None
    path: Path | None
    options: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class DatasetSpec:
    """One dataset: its evaluator, file or folder, KG and evaluator options."""

    name: str
    evaluator: EvaluatorKind
    path: Path | None = None
    kg: str | None = None
    format: str | None = None
    mode: str = "term"
    options: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class TsneSpec:
    """Terms of ``concepts`` sampled concepts (by concept) and ``per_type`` concepts of the
    ``types`` largest semantic types (by type), projected with t-SNE."""

    kg: str
    concepts: int = 30
    min_terms: int = 3
    types: int = 8
    per_type: int = 40
    seed: int = 0


@dataclass(frozen=True)
class BenchSpec:
    """A parsed suite file (paths resolved)."""

    path: Path
    name: str
    models: list[ModelSpec]
    kgs: dict[str, KGSpec]
    datasets: list[DatasetSpec]
    tsne: TsneSpec | None = None
    seed: int = 0

    def model(self, name: str) -> ModelSpec:
        """The model (or baseline) called ``name``."""
        return next(m for m in self.models if m.name == name)


_TOP = {"name", "description", "data_root", "models", "baselines", "kgs", "datasets", "tsne"}
_TOP |= {"seed"}
_DATASET = {"evaluator", "path", "kg", "format", "mode", "options"}


def _mapping(value: Any, where: str, path: Path) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InputFormatError(path, None, f"{where} must be a mapping")
    return value


def _unknown(keys: Any, known: set[str], where: str, path: Path) -> None:
    extra = sorted(set(keys) - known)
    if extra:
        raise InputFormatError(
            path, None, f"unknown key(s) {extra} in {where}; known: {sorted(known)}"
        )


def _existing(base: Path, value: object, where: str, spec_path: Path) -> Path | None:
    """``value`` (``None``: none) resolved below ``base``, which must exist."""
    if value is None:
        return None
    found = (base / str(value)).resolve()
    if not found.exists():
        raise InputFormatError(spec_path, None, f"{where}: {found} not found")
    return found


def load_spec(path: str | Path) -> BenchSpec:
    """Read and check a suite file; files it names must exist.

    Raises:
        MissingExtraError: PyYAML is not installed (the ``lab`` extra).
        InputFormatError: the file is missing, not YAML, or does not describe a suite.
    """
    try:
        import yaml
    except ImportError as exc:
        raise MissingExtraError("pyyaml", "lab") from exc
    path = Path(path).resolve()
    if not path.is_file():
        raise InputFormatError(path, None, "benchmark suite file not found")
    try:
        raw = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        raise InputFormatError(path, None, f"not valid YAML: {exc}") from None
    raw = _mapping(raw, "the suite", path)
    _unknown(raw, _TOP, "the suite", path)
    here = path.parent
    data_root = (here / str(raw.get("data_root", "."))).resolve()
    if not data_root.is_dir():
        raise InputFormatError(path, None, f"data_root {data_root} not found")
    models = _models(raw, here, path)
    kgs = _kgs(raw, data_root, path)
    datasets = _datasets(raw, data_root, kgs, path)
    tsne = None
    if raw.get("tsne"):
        t = _mapping(raw["tsne"], "tsne", path)
        _unknown(t, set(TsneSpec.__dataclass_fields__), "tsne", path)
        tsne = TsneSpec(**t)
        if tsne.kg not in kgs:
            raise InputFormatError(path, None, f"tsne: unknown kg {tsne.kg!r}")
    return BenchSpec(
        path=path,
        name=str(raw.get("name", path.stem)),
        models=models,
        kgs=kgs,
        datasets=datasets,
        tsne=tsne,
        seed=int(raw.get("seed", 0)),
    )


def _models(raw: dict[str, Any], here: Path, path: Path) -> list[ModelSpec]:
    models: list[ModelSpec] = []
    for name, value in _mapping(raw.get("models"), "models", path).items():
        if value is None or value == DEFAULT_MODEL:
            models.append(ModelSpec(str(name)))
            continue
        entry = {"path": value} if isinstance(value, str) else _mapping(value, name, path)
        _unknown(entry, {"path", "pooling"}, f"model {name!r}", path)
        model_path = None if entry.get("path") == DEFAULT_MODEL else entry.get("path")
        resolved = _existing(here, model_path, f"model {name!r}", path)
        models.append(ModelSpec(str(name), resolved, entry.get("pooling")))
    for kind in raw.get("baselines") or []:
        if kind not in BASELINES:
            raise InputFormatError(
                path, None, f"unknown baseline {kind!r}; known: {', '.join(BASELINES)}"
            )
        models.append(ModelSpec(str(kind), baseline=str(kind)))
    if not models:
        raise InputFormatError(path, None, "no model and no baseline to evaluate")
    names = [m.name for m in models]
    if len(set(names)) != len(names):
        raise InputFormatError(path, None, f"model names must be distinct: {names}")
    return models


def _kgs(raw: dict[str, Any], data_root: Path, path: Path) -> dict[str, KGSpec]:
    kgs: dict[str, KGSpec] = {}
    for name, value in _mapping(raw.get("kgs"), "kgs", path).items():
        entry = _mapping(value, f"kg {name!r}", path)
        _unknown(entry, {"format", "path", "options"}, f"kg {name!r}", path)
        resolved = _existing(data_root, entry.get("path"), f"kg {name!r}", path)
        if entry.get("format") is None and resolved is None:
            raise InputFormatError(path, None, f"kg {name!r} needs a format or a KG folder path")
        kgs[str(name)] = KGSpec(
            str(name), entry.get("format"), resolved, dict(entry.get("options") or {})
        )
    return kgs


def _datasets(
    raw: dict[str, Any], data_root: Path, kgs: dict[str, KGSpec], path: Path
) -> list[DatasetSpec]:
    datasets: list[DatasetSpec] = []
    for name, value in _mapping(raw.get("datasets"), "datasets", path).items():
        entry = _mapping(value, f"dataset {name!r}", path)
        _unknown(entry, _DATASET, f"dataset {name!r}", path)
        try:
            kind = EvaluatorKind(entry.get("evaluator"))
        except ValueError:
            known = ", ".join(k.value for k in EvaluatorKind)
            raise InputFormatError(
                path, None, f"dataset {name!r}: evaluator must be one of {known}"
            ) from None
        ds_path = None
        if kind.needs_path:
            if not entry.get("path"):
                raise InputFormatError(path, None, f"dataset {name!r} needs a path")
            ds_path = _existing(data_root, entry["path"], f"dataset {name!r}", path)
        kg = entry.get("kg")
        if kind.needs_kg and kg not in kgs:
            raise InputFormatError(
                path, None, f"dataset {name!r} needs a kg among {sorted(kgs)}, got {kg!r}"
            )
        datasets.append(
            DatasetSpec(
                name=str(name),
                evaluator=kind,
                path=ds_path,
                kg=kg,
                format=entry.get("format"),
                mode=str(entry.get("mode", "term")),
                options=dict(entry.get("options") or {}),
            )
        )
    if not datasets:
        raise InputFormatError(path, None, "no dataset to evaluate on")
    return datasets
