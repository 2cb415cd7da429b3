"""One function per evaluator kind: build the evaluator for a dataset, run it on a model.

Each returns ``(metrics, details)``: metrics without the evaluator's prefix (``acc@1``,
``spearman``, ``f1``, ...) and JSON-ready details for the plots (θ sweeps, per-type rows).
KGs and indexes come from the run's :class:`~termnorm.lab.bench.session.BenchSession`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from termnorm.encoders.memo import MemoEncoder
from termnorm.evaluation.metric_names import unprefixed
from termnorm.lab.bench.session import BenchSession
from termnorm.lab.bench.spec import DatasetSpec, EvaluatorKind, ModelSpec

__all__ = ["run_task"]

Outcome = tuple[dict[str, float], dict[str, Any]]


def _matcher(
    session: BenchSession, model: ModelSpec, encoder: MemoEncoder | None, ds: DatasetSpec
) -> Any:
    assert ds.kg is not None
    if model.baseline is not None:
        from termnorm.search.lexical import make_lexical_matcher

        return make_lexical_matcher(model.baseline, session.kg(ds.kg))
    from termnorm.search.normalizer import Normalizer

    assert encoder is not None
    return Normalizer(session.index(encoder, ds.kg), encoder, mode=ds.mode)


def _normalization(
    session: BenchSession, model: ModelSpec, encoder: MemoEncoder | None, ds: DatasetSpec
) -> Outcome:
    from termnorm.evaluation.normalization import NormalizationEvaluator
    from termnorm.mentions import read_mentions

    assert ds.path is not None
    evaluator = NormalizationEvaluator(
        read_mentions(ds.path, ds.format), name="normalize", **ds.options
    )
    return unprefixed(evaluator(_matcher(session, model, encoder, ds)), "normalize_"), {}


def _zero_shot(
    session: BenchSession, model: ModelSpec, encoder: MemoEncoder | None, ds: DatasetSpec
) -> Outcome:
    from termnorm.evaluation.zero_shot import ZeroShotEvaluator

    assert ds.path is not None
    evaluator = ZeroShotEvaluator([ds.path], name="zeroshot", **ds.options)
    if model.baseline is not None:
        from termnorm.search.lexical import make_lexical_matcher

        kind = model.baseline
        return unprefixed(evaluator(lambda kg: make_lexical_matcher(kind, kg)), "zeroshot_"), {}
    return unprefixed(evaluator(encoder), "zeroshot_"), {}  # type: ignore[arg-type]


def _mcsm(
    session: BenchSession, model: ModelSpec, encoder: MemoEncoder | None, ds: DatasetSpec
) -> Outcome:
    from termnorm.evaluation.mcsm import MCSMEvaluator

    assert ds.kg is not None and encoder is not None
    result = MCSMEvaluator(session.kg(ds.kg), **ds.options).evaluate(encoder)
    return result.metrics(), result.to_dict()


def _clustering(
    session: BenchSession, model: ModelSpec, encoder: MemoEncoder | None, ds: DatasetSpec
) -> Outcome:
    from termnorm.evaluation.clustering import ClusteringEvaluator

    assert ds.kg is not None and encoder is not None
    result = ClusteringEvaluator(session.kg(ds.kg), **ds.options).evaluate(encoder)
    return result.metrics(), result.to_dict()


def _relation(
    session: BenchSession, model: ModelSpec, encoder: MemoEncoder | None, ds: DatasetSpec
) -> Outcome:
    from termnorm.evaluation.relation_classification import (
        RelationClassificationEvaluator,
        RelationMode,
    )

    assert ds.kg is not None and encoder is not None
    evaluator = RelationClassificationEvaluator(session.kg(ds.kg), **ds.options)
    # fine-tuning trains a copy of the transformer itself, not the memo around it
    target = encoder.encoder if evaluator.mode is RelationMode.FINE_TUNE else encoder
    result = evaluator.evaluate(target)
    return result.metrics(), result.to_dict()


def _relatedness(
    session: BenchSession, model: ModelSpec, encoder: MemoEncoder | None, ds: DatasetSpec
) -> Outcome:
    from termnorm.evaluation.relatedness import RelatednessEvaluator

    assert ds.path is not None and encoder is not None
    result = RelatednessEvaluator(ds.path, **ds.options).evaluate(encoder)
    return result.metrics(), result.to_dict()


def _linkpred(
    session: BenchSession, model: ModelSpec, encoder: MemoEncoder | None, ds: DatasetSpec
) -> Outcome:
    from termnorm.evaluation.link_prediction import LinkPredictionEvaluator

    assert ds.kg is not None and encoder is not None
    return LinkPredictionEvaluator(session.kg(ds.kg), **ds.options).evaluate(encoder), {}


_TASKS: dict[EvaluatorKind, Callable[..., Outcome]] = {
    EvaluatorKind.NORMALIZATION: _normalization,
    EvaluatorKind.ZERO_SHOT: _zero_shot,
    EvaluatorKind.MCSM: _mcsm,
    EvaluatorKind.CLUSTERING: _clustering,
    EvaluatorKind.RELATION: _relation,
    EvaluatorKind.RELATEDNESS: _relatedness,
    EvaluatorKind.LINKPRED: _linkpred,
}


def run_task(
    session: BenchSession, model: ModelSpec, encoder: MemoEncoder | None, ds: DatasetSpec
) -> Outcome:
    """Run the evaluator of ``ds`` on ``model`` (its encoder, or its baseline matcher)."""
    return _TASKS[ds.evaluator](session, model, encoder, ds)
