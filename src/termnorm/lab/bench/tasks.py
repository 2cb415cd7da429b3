"""One function per evaluator kind: build the evaluator for a dataset, run it on a model.

Each returns ``(metrics, details)``: metrics without the evaluator's prefix (``acc@1``,
``spearman``, ``f1``, ...) and JSON-ready details for the plots (θ sweeps, per-type rows).
KGs and indexes come from the run's :class:`~termnorm.lab.bench.session.BenchSession`.
"""

from __future__ import annotations

import importlib
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


def _linkpred(
    session: BenchSession, model: ModelSpec, encoder: MemoEncoder | None, ds: DatasetSpec
) -> Outcome:
    from termnorm.evaluation.link_prediction import LinkPredictionEvaluator

    assert ds.kg is not None and encoder is not None
    return LinkPredictionEvaluator(session.kg(ds.kg), **ds.options).evaluate(encoder), {}


def _embedding_task(module: str, name: str, on_kg: bool) -> Callable[..., Outcome]:
    """The task of the evaluator ``name`` of ``termnorm.evaluation.<module>``, built on the
    dataset's KG (``on_kg``) or its file, whose result gives ``metrics()`` and ``to_dict()``."""

    def task(
        session: BenchSession, model: ModelSpec, encoder: MemoEncoder | None, ds: DatasetSpec
    ) -> Outcome:
        evaluator = getattr(importlib.import_module(f"termnorm.evaluation.{module}"), name)
        assert (ds.kg if on_kg else ds.path) is not None and encoder is not None
        source = session.kg(ds.kg) if on_kg and ds.kg is not None else ds.path
        result = evaluator(source, **ds.options).evaluate(encoder)
        return result.metrics(), result.to_dict()

    return task


_TASKS: dict[EvaluatorKind, Callable[..., Outcome]] = {
    EvaluatorKind.NORMALIZATION: _normalization,
    EvaluatorKind.ZERO_SHOT: _zero_shot,
    EvaluatorKind.MCSM: _embedding_task("mcsm", "MCSMEvaluator", on_kg=True),
    EvaluatorKind.CLUSTERING: _embedding_task("clustering", "ClusteringEvaluator", on_kg=True),
    EvaluatorKind.RELATION: _relation,
    EvaluatorKind.RELATEDNESS: _embedding_task("relatedness", "RelatednessEvaluator", on_kg=False),
    EvaluatorKind.LINKPRED: _linkpred,
}


def run_task(
    session: BenchSession, model: ModelSpec, encoder: MemoEncoder | None, ds: DatasetSpec
) -> Outcome:
    """Run the evaluator of ``ds`` on ``model`` (its encoder, or its baseline matcher)."""
    return _TASKS[ds.evaluator](session, model, encoder, ds)
