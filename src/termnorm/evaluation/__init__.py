"""Evaluators: normalization, zero-shot and embedding evaluators (mention readers live in
:mod:`termnorm.mentions`).

Every evaluator has one shape: ``evaluator(model_or_matcher) -> {"<name>_<metric>": float}``
with a ``primary_metric``. Names resolve lazily (``_LAZY``: public name -> module), so that
importing one submodule, as the CLI does for its option choices, loads nothing else; an
evaluator module adds its public names to ``_LAZY`` and ``__all__``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from termnorm._lazy import lazy_getattr

if TYPE_CHECKING:  # pragma: no cover
    from termnorm.evaluation.clustering import ClusteringEvaluator
    from termnorm.evaluation.embedding import ConceptVector, Embedder
    from termnorm.evaluation.link_prediction import LinkPredictionEvaluator
    from termnorm.evaluation.mcsm import MCSMEvaluator
    from termnorm.evaluation.normalization import NormalizationEvaluator, NormalizationReport
    from termnorm.evaluation.relatedness import RelatednessEvaluator, read_pairs
    from termnorm.evaluation.relation_classification import (
        RelationClassificationEvaluator,
        RelationMode,
    )
    from termnorm.evaluation.selection import (
        CrossFitSelection,
        SettingScore,
        cross_fitted_selection,
    )
    from termnorm.evaluation.significance import (
        PairedComparison,
        RunComparison,
        compare_runs,
        mcnemar_p,
        read_correctness,
        read_documents,
    )
    from termnorm.evaluation.zero_shot import ZeroShotEvaluator, ZeroShotReport

__all__ = [
    "ClusteringEvaluator",
    "ConceptVector",
    "CrossFitSelection",
    "Embedder",
    "LinkPredictionEvaluator",
    "MCSMEvaluator",
    "NormalizationEvaluator",
    "NormalizationReport",
    "PairedComparison",
    "RelatednessEvaluator",
    "RelationClassificationEvaluator",
    "RelationMode",
    "RunComparison",
    "SettingScore",
    "ZeroShotEvaluator",
    "ZeroShotReport",
    "compare_runs",
    "cross_fitted_selection",
    "mcnemar_p",
    "read_correctness",
    "read_documents",
    "read_pairs",
]

_LAZY = {
    "NormalizationEvaluator": "normalization",
    "NormalizationReport": "normalization",
    "ZeroShotEvaluator": "zero_shot",
    "ZeroShotReport": "zero_shot",
    "ClusteringEvaluator": "clustering",
    "ConceptVector": "embedding",
    "Embedder": "embedding",
    "LinkPredictionEvaluator": "link_prediction",
    "MCSMEvaluator": "mcsm",
    "RelatednessEvaluator": "relatedness",
    "read_pairs": "relatedness",
    "RelationClassificationEvaluator": "relation_classification",
    "RelationMode": "relation_classification",
    "PairedComparison": "significance",
    "RunComparison": "significance",
    "compare_runs": "significance",
    "mcnemar_p": "significance",
    "read_correctness": "significance",
    "read_documents": "significance",
    "CrossFitSelection": "selection",
    "SettingScore": "selection",
    "cross_fitted_selection": "selection",
}


__getattr__ = lazy_getattr(__name__, _LAZY)
