"""Settings of the evaluation jobs (``termnorm eval ...``, ``bench``), one options dataclass
per evaluator or job: the fields are the evaluator's keyword arguments where they can be
(``MCSMEvaluator(kg, **asdict(MCSMOptions()))``) and the commands generate their flags from
them. This module imports neither torch, the evaluators nor the lab (whose significance tests
and bench suite read :class:`BootstrapOptions` and :class:`BenchRunOptions`), so that
registering the commands stays cheap.
"""

# opt() returns a dataclasses.Field, as field() does: no shared mutable default
# ruff: noqa: RUF009
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from termnorm.encoders.runtime import THREADS_HELP
from termnorm.mentions.abbreviations import AbbreviationMode
from termnorm.mentions.composite import CompositeRule
from termnorm.mentions.mention import MentionFormat
from termnorm.options import opt
from termnorm.search.lexical.kinds import LexicalKind

__all__ = [
    "BenchRunOptions",
    "BootstrapOptions",
    "ClusteringOptions",
    "EncoderOptions",
    "KGESimilarityOptions",
    "LinkPredictionOptions",
    "MCSMOptions",
    "NormalizationOptions",
    "RelationOptions",
    "ResampleUnit",
]


@dataclass(frozen=True)
class EncoderOptions:
    """The encoder a benchmark scores: its folder, pooling and CPU threads."""

    model: Path | None = opt(None, "Encoder folder (default: the built-in all-MiniLM-L6-v2).")
    pooling: str | None = opt(None, "cls|mean (default: the folder's own, else mean).")
    threads: int | None = opt(None, THREADS_HELP, min=1)


@dataclass(frozen=True)
class MCSMOptions:
    """:class:`~termnorm.evaluation.mcsm.MCSMEvaluator`'s settings."""

    k: int = opt(40, "Neighbourhood size (CODER: 40, max ≈ 11.09).", "-k", min=1)
    vectors: str = opt("name", "name: preferred name; mean: synonyms.")
    types: tuple[str, ...] | None = opt(None, "Only this type (repeatable).", "--type")
    max_concepts_per_type: int | None = opt(None, "Seeded sample of concepts per type.")
    seed: int = opt(0, "Seed of the sample.")


@dataclass(frozen=True)
class RelationOptions:
    """:class:`~termnorm.evaluation.relation_classification.RelationClassificationEvaluator`'s
    settings."""

    mode: str = opt("feature", "feature (frozen) or fine-tune.")
    epochs: int = opt(50, "Training epochs (CODER: 50).", min=1)
    max_triplets: int | None = opt(None, "Seeded sample of triplets (big KGs).")
    test_fraction: float = opt(0.2, "Held-out share.")
    seed: int = opt(0, "Seed of the sample, split and batches.")


@dataclass(frozen=True)
class ClusteringOptions:
    """:class:`~termnorm.evaluation.clustering.ClusteringEvaluator`'s settings."""

    max_concepts: int = opt(1000, "Concepts per split.")
    tune_fraction: float = opt(0.5, "Share used to pick θ.")
    seed: int = opt(0, "Seed of the split and samples.")


@dataclass(frozen=True)
class LinkPredictionOptions:
    """What ``termnorm eval linkpred`` ranks (models, KGEs) and
    :class:`~termnorm.evaluation.link_prediction.LinkPredictionEvaluator`'s settings."""

    models: tuple[Path, ...] | None = opt(
        None, "Model folder with relations/ (termnorm train); repeatable.", "--model"
    )
    kge: tuple[Path, ...] | None = opt(
        None, "KGE folder (termnorm kge train on --kg) ranked beside the models; repeatable."
    )
    test_fraction: float = opt(0.2, "Share of triplets ranked.")
    max_triplets: int = opt(2000, "At most this many ranked.")
    raw: bool = opt(False, "Do not filter other known tails.", "--raw")
    seed: int = opt(0, "Seed of the sample.")
    triplets: Path | None = opt(
        None,
        "Rank exactly these held-out edges (Parquet head/relation/tail, from 'termnorm kg split').",
    )


@dataclass(frozen=True)
class KGESimilarityOptions:
    """The similarity benchmarks ``termnorm kge train`` runs on a KGE's entity vectors
    (``termnorm.cli.kge_cmd.similarity_evaluators``)."""

    mcsm: bool = opt(True, "MCSM of the entity vectors on the KG's types.")
    mcsm_k: int = opt(40, "MCSM neighbourhood size.", min=1)
    mcsm_max_per_type: int | None = opt(
        None, "Seeded sample of concepts per type.", "--mcsm-max-concepts-per-type"
    )
    relatedness: tuple[str, ...] | None = opt(
        None,
        "[NAME=]PAIRS_FILE (MayoSRS CSV or UMNSRS TSV), scored on the pairs whose terms name "
        "a KG concept (repeatable).",
    )


@dataclass(frozen=True)
class NormalizationOptions:
    """What ``termnorm eval normalize`` scores (an index, a lexical baseline, or a model
    zero-shot) and how :class:`~termnorm.evaluation.normalization.NormalizationEvaluator`
    counts (the search itself is the command's :class:`~termnorm.search.spec.PipelineSpec`)."""

    index: Path | None = opt(None, "Index folder to evaluate.")
    fmt: MentionFormat | None = opt(None, "Mention format (detected when omitted).", "--format")
    k: int = opt(10, "Largest cut-off: acc@1,3,5,10 up to k are reported.", "-k")
    baseline: LexicalKind | None = opt(
        None, "Evaluate a lexical baseline instead of an index (needs --kg)."
    )
    kg: Path | None = opt(None, "KG folder the baseline matches against.")
    predictions: Path | None = opt(None, "Write one JSON line per mention (top-k, ranks) here.")
    zero_shot: bool = opt(
        False, "CODER protocol: search each fold's standard.txt only.", "--zero-shot"
    )
    model: Path | None = opt(
        None, "Encoder folder (zero-shot; default built-in; with --index: override)."
    )
    pooling: str | None = opt(None, "cls|mean (zero-shot model).")
    composite_rule: CompositeRule = opt(
        CompositeRule.ANY, "How composites count in the 'all' figures."
    )
    abbreviations: AbbreviationMode | None = opt(
        None,
        "Expand short forms through the abbreviations each mention's document defines (ab3p) "
        "or not (none). Default: ab3p for formats that carry the documents (pubtator, "
        "gscplus, phenobert), none otherwise. The mention is searched as written and "
        "expanded, and the ranking whose top candidate scores higher is kept "
        "(termnorm.search.context).",
    )


class ResampleUnit(str, Enum):
    """What the bootstrap draws with replacement (auto: documents where there are two+)."""

    auto = "auto"
    document = "document"
    mention = "mention"


@dataclass(frozen=True)
class BootstrapOptions:
    """How ``termnorm eval compare`` and ``eval select`` score and resample: acc@k, then
    :func:`~termnorm.lab.significance.compare_runs`' or
    :func:`~termnorm.lab.selection.cross_fitted_selection`'s draws."""

    k: int = opt(1, "Score acc@k (a mention counts if rank ≤ k).", "-k", min=1)
    n_boot: int = opt(10_000, "Bootstrap draws.", "--bootstrap", min=1)
    confidence: float = opt(0.95, "Confidence of the interval.", min=0.5, max=0.9999)
    seed: int = opt(0, "Seed of the bootstrap draws.")
    unit: ResampleUnit = opt(
        ResampleUnit.auto,
        "What the bootstrap resamples: whole documents (mentions of one article are not "
        "independent) or single mentions; auto takes documents where the mentions come from "
        "two or more.",
    )


@dataclass(frozen=True)
class BenchRunOptions:
    """How ``termnorm bench`` runs a suite: the part of it, the result cache
    (:func:`~termnorm.lab.bench.runner.run_bench`'s ``cache_dir``, ``force``,
    ``show_progress``) and the encoder's CPU threads."""

    cache_dir: Path | None = opt(None, "Result cache (default: <user cache>/termnorm/bench).")
    force: bool = opt(False, "Recompute, ignoring cached results.", "--force")
    models: tuple[str, ...] | None = opt(
        None, "Only this model or baseline of the suite (repeatable).", "--model"
    )
    datasets: tuple[str, ...] | None = opt(
        None, "Only this dataset of the suite (repeatable).", "--dataset"
    )
    progress: bool = opt(False, "Show encoding progress bars.", "--progress")
    threads: int | None = opt(None, THREADS_HELP, min=1)
