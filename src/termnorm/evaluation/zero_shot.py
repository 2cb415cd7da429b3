"""CODER's zero-shot protocol for CADEC and PsyTAR (CODER, KDD'22, section 4.4.1).

Each fold folder holds ``test.txt`` (mentions, ``SNOMED-id<TAB>text``) and ``standard.txt``
(the fold's target concepts, one SNOMED CT ID and its standard text a line). Per fold, the
targets become a small in-memory KG (concept ``SNOMED:<id>``, one term = its standard text)
and the test mentions are normalized against it alone, with no training data; the model is an
encoder (indexed with :meth:`TermIndex.build <termnorm.index.TermIndex.build>` and searched
with the normalizer) or any factory ``KnowledgeGraph -> Matcher`` (the lexical baselines).

Accuracies are averaged over folds, each fold weighing the same (CODER reports "the average
scores on different test sets"): acc@k = (1/F) Σ_f acc@k_f, likewise MRR; counts are summed.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, cast

from termnorm.errors import EmptyResultError
from termnorm.evaluation.normalization import (
    COUNT_KEYS,
    DEFAULT_KS,
    NormalizationEvaluator,
    NormalizationReport,
)
from termnorm.evaluation.predictions import prediction_record, write_records
from termnorm.kg.graph import KnowledgeGraph
from termnorm.kg.ids import namespaced
from termnorm.mentions import Target, read_mentions, read_targets
from termnorm.mentions.mention import MentionFormat
from termnorm.mentions.tsv import FOLD_TEST, fold_file
from termnorm.search.candidate import Matcher

if TYPE_CHECKING:
    from termnorm.index.term_index import Encoder

__all__ = ["MatcherFactory", "ZeroShotEvaluator", "ZeroShotReport", "encoder_matcher", "targets_kg"]

logger = logging.getLogger(__name__)

MatcherFactory = Callable[[KnowledgeGraph], Matcher]
TARGET_NAMESPACE = "SNOMED"


def targets_kg(targets: Sequence[Target], namespace: str = TARGET_NAMESPACE) -> KnowledgeGraph:
    """An in-memory KG with one concept per target ID; each target text is a preferred term."""
    if not targets:
        raise EmptyResultError("no target concept to search among")
    concepts: dict[str, str] = {}
    terms = []
    for target in targets:
        cid = namespaced(namespace, target.concept_id)
        concepts.setdefault(cid, target.text)
        terms.append({"concept_id": cid, "term": target.text, "is_preferred": True})
    return KnowledgeGraph.from_records(
        [{"concept_id": cid, "name": name} for cid, name in concepts.items()], terms
    )


def encoder_matcher(encoder: Encoder) -> MatcherFactory:
    """A factory indexing a KG with ``encoder`` and searching it with the normalizer."""

    def build(kg: KnowledgeGraph) -> Matcher:
        from termnorm.index import TermIndex
        from termnorm.search.normalizer import Normalizer

        index = TermIndex.build(kg, encoder, show_progress=False)
        return Normalizer(index, encoder)

    return build


@dataclass
class ZeroShotReport:
    """Fold-averaged metrics, and each fold's own report by fold name."""

    metrics: dict[str, float]
    folds: dict[str, NormalizationReport]

    def write_predictions(self, path: str | Path) -> Path:
        """Write one predictions file for every fold: each record starts with its ``fold``
        (the format is :mod:`termnorm.evaluation.predictions`'s)."""
        return write_records(
            path,
            (
                prediction_record(result, fold=label)
                for label, report in self.folds.items()
                for result in report.results
            ),
        )


class ZeroShotEvaluator:
    """acc@k and MRR averaged over CADEC/PsyTAR folds (see module doc).

    ``folds`` are fold folders (or ``test.txt`` files with a ``standard.txt`` beside them);
    ``split`` names the mention file inside a folder.
    """

    def __init__(
        self,
        folds: Sequence[str | Path],
        ks: Sequence[int] = DEFAULT_KS,
        name: str = "zeroshot",
        split: str = FOLD_TEST,
    ) -> None:
        if not folds:
            raise ValueError("give at least one fold folder")
        self.name = name
        self.ks = tuple(sorted(set(ks)))
        self.folds: list[tuple[str, NormalizationEvaluator, list[Target]]] = []
        for fold in map(Path, folds):
            mentions_path = fold_file(fold, split)
            folder = mentions_path.parent
            mentions = read_mentions(mentions_path, MentionFormat.TSV)
            evaluator = NormalizationEvaluator(mentions, self.ks, name=name)
            label = folder.name if fold.is_dir() else f"{folder.name}/{mentions_path.stem}"
            self.folds.append((label, evaluator, read_targets(folder)))

    @property
    def primary_metric(self) -> str:
        """Fold-averaged accuracy at the smallest k."""
        return f"{self.name}_acc@{self.ks[0]}"

    def __call__(self, model: Encoder | MatcherFactory) -> dict[str, float]:
        """Fold-averaged metrics of an encoder or a ``KnowledgeGraph -> Matcher`` factory."""
        return self.evaluate(model).metrics

    def evaluate(self, model: Encoder | MatcherFactory) -> ZeroShotReport:
        """Run every fold against its own targets; average the rates, sum the counts."""
        factory = _as_factory(model)
        reports: dict[str, NormalizationReport] = {}
        for label, evaluator, targets in self.folds:
            logger.info("%s: fold %s, %d targets", self.name, label, len(targets))
            matcher = factory(targets_kg(targets))
            reports[label] = evaluator.evaluate(matcher)
        metrics = _average([r.metrics for r in reports.values()], f"{self.name}_")
        return ZeroShotReport(metrics, reports)


def _as_factory(model: Encoder | MatcherFactory) -> MatcherFactory:
    if hasattr(model, "encode"):
        return encoder_matcher(cast("Encoder", model))
    return cast(MatcherFactory, model)


def _average(per_fold: list[dict[str, float]], prefix: str) -> dict[str, float]:
    """Mean of each rate over the folds that have it; counts summed; plus ``{prefix}folds``."""
    keys = list(dict.fromkeys(key for metrics in per_fold for key in metrics))
    out: dict[str, float] = {}
    for key in keys:
        values = [m[key] for m in per_fold if key in m]
        is_count = key.removeprefix(prefix) in COUNT_KEYS
        out[key] = float(sum(values)) if is_count else sum(values) / len(values)
    out[f"{prefix}folds"] = float(len(per_fold))
    return out
