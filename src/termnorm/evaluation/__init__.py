"""Evaluators: normalization, annotation (concepts in running text), zero-shot and embedding
evaluators, and prediction files (mention readers live in :mod:`termnorm.mentions`;
significance tests, selection and the benchmark suite in :mod:`termnorm.lab`).

Every evaluator has one shape: ``evaluator(model_or_matcher) -> {"<name>_<metric>": float}``
with a ``primary_metric``. Names resolve lazily (``_MODULES``: module -> public names), so that
importing one submodule, as the CLI does for its option choices, loads nothing else; an
evaluator module adds its public names to ``_MODULES`` and ``__all__``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from termnorm._lazy import lazy_getattr

if TYPE_CHECKING:  # pragma: no cover
    from termnorm.evaluation.annotation import AnnotationEvaluator, AnnotationScores
    from termnorm.evaluation.clustering import ClusteringEvaluator
    from termnorm.evaluation.embedding import ConceptVector, Embedder
    from termnorm.evaluation.link_prediction import LinkPredictionEvaluator
    from termnorm.evaluation.mcsm import MCSMEvaluator
    from termnorm.evaluation.normalization import NormalizationEvaluator, NormalizationReport
    from termnorm.evaluation.predictions import (
        MentionKey,
        prediction_record,
        read_correctness,
        read_documents,
        read_records,
        write_records,
    )
    from termnorm.evaluation.relatedness import RelatednessEvaluator, read_pairs
    from termnorm.evaluation.relation_classification import (
        RelationClassificationEvaluator,
        RelationMode,
    )
    from termnorm.evaluation.zero_shot import ZeroShotEvaluator, ZeroShotReport

__all__ = [
    "AnnotationEvaluator",
    "AnnotationScores",
    "ClusteringEvaluator",
    "ConceptVector",
    "Embedder",
    "LinkPredictionEvaluator",
    "MCSMEvaluator",
    "MentionKey",
    "NormalizationEvaluator",
    "NormalizationReport",
    "RelatednessEvaluator",
    "RelationClassificationEvaluator",
    "RelationMode",
    "ZeroShotEvaluator",
    "ZeroShotReport",
    "prediction_record",
    "read_correctness",
    "read_documents",
    "read_pairs",
    "read_records",
    "write_records",
]

_MODULES = {
    "annotation": ("AnnotationEvaluator", "AnnotationScores"),
    "normalization": ("NormalizationEvaluator", "NormalizationReport"),
    "zero_shot": ("ZeroShotEvaluator", "ZeroShotReport"),
    "clustering": ("ClusteringEvaluator",),
    "embedding": ("ConceptVector", "Embedder"),
    "link_prediction": ("LinkPredictionEvaluator",),
    "mcsm": ("MCSMEvaluator",),
    "relatedness": ("RelatednessEvaluator", "read_pairs"),
    "relation_classification": ("RelationClassificationEvaluator", "RelationMode"),
    "predictions": (
        "MentionKey",
        "prediction_record",
        "read_correctness",
        "read_documents",
        "read_records",
        "write_records",
    ),
}
__getattr__ = lazy_getattr(__name__, {n: m for m, names in _MODULES.items() for n in names})
