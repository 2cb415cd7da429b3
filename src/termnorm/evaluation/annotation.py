"""Annotation quality: concepts found in running text, scored against gold mentions.

Predictions are any objects with ``doc_id``, ``start``, ``end`` (code-point offsets into the
document) and ``concept_id`` (:class:`AnnotationLike`; the pipeline's ``Annotation`` is one).
Gold mentions are :class:`~termnorm.mentions.Mention` records with offsets, as
:func:`~termnorm.mentions.read_mentions` reads them from PubTator, GSC+ and PhenoBERT.

IDs compare through :func:`~termnorm.kg.ids.id_key` and, when ``alt_ids`` is given, the
predicted concept's alternative IDs: a predicted concept *hits* a gold mention when
``{id_key(c)} ∪ {id_key(a) : a ∈ alt_ids(c)}`` meets the mention's gold keys (any of a
composite mention's IDs). Four levels, each micro-averaged over the corpus as tp/fp/fn with
P = tp/(tp+fp), R = tp/(tp+fn), F1 = 2PR/(P+R) (0 where a denominator is 0):

* **mention, strict**: same document, same ``(start, end)``, concept hits the gold mention.
* **mention, lenient**: same document, overlapping spans, concept hits the gold mention.
* **document**: per document the set of gold concepts (every gold ID of its mentions) against
  the set of predicted concepts (a predicted concept that hits a gold ID of the document
  counts as that ID), the metric PhenoTagger, PhenoBERT and FastHPOCR report.
* **span**: exact ``(start, end)`` sets, concepts ignored (the detector alone).

At the mention levels each gold mention and each prediction is matched at most once (greedy,
gold mentions in offset order, each taking the unmatched prediction of largest overlap).
Duplicate predictions (same document, span and concept key) count once. Unlinkable gold
mentions (no ID) count at the span level only: a prediction on one is a false positive at
the concept levels. The error split of the gold mentions with an ID: ``n_missed_span`` (no
prediction has its exact span: not found) and ``n_wrong_concept`` (its exact span is
predicted, never with a concept that hits it: found, wrong concept).

Metric names carry the evaluator's name as a prefix (``annotate_mention_strict_f1``); the
primary metric is the strict mention-level F1.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from termnorm.errors import EmptyResultError
from termnorm.kg.ids import id_key
from termnorm.mentions import Mention

__all__ = [
    "LEVELS",
    "AnnotationEvaluator",
    "AnnotationLike",
    "AnnotationScores",
    "LevelScores",
]

LEVELS = ("mention_strict", "mention_lenient", "document", "span")
"""The scored levels, in report order (see module doc)."""

AltIds = Callable[[str], Iterable[str]]


class AnnotationLike(Protocol):
    """What the evaluator reads of a predicted annotation."""

    @property
    def doc_id(self) -> str: ...

    @property
    def start(self) -> int: ...

    @property
    def end(self) -> int: ...

    @property
    def concept_id(self) -> str: ...


@dataclass(frozen=True)
class LevelScores:
    """Counts of one level; precision, recall and F1 derived from them (0 on 0/0)."""

    tp: int
    fp: int
    fn: int

    @property
    def precision(self) -> float:
        """tp / (tp + fp)."""
        return _ratio(self.tp, self.tp + self.fp)

    @property
    def recall(self) -> float:
        """tp / (tp + fn)."""
        return _ratio(self.tp, self.tp + self.fn)

    @property
    def f1(self) -> float:
        """Harmonic mean of precision and recall."""
        p, r = self.precision, self.recall
        return _ratio(2 * p * r, p + r)

    def as_metrics(self, prefix: str) -> dict[str, float]:
        """``{prefix}precision``, ``recall``, ``f1``, ``tp``, ``fp``, ``fn``."""
        return {
            f"{prefix}precision": self.precision,
            f"{prefix}recall": self.recall,
            f"{prefix}f1": self.f1,
            f"{prefix}tp": float(self.tp),
            f"{prefix}fp": float(self.fp),
            f"{prefix}fn": float(self.fn),
        }


@dataclass(frozen=True)
class AnnotationScores:
    """The four levels (see module doc) and the error split of the gold mentions."""

    mention_strict: LevelScores
    mention_lenient: LevelScores
    document: LevelScores
    span: LevelScores
    n_missed_span: int
    n_wrong_concept: int

    def level(self, name: str) -> LevelScores:
        """The scores of level ``name`` (one of :data:`LEVELS`)."""
        if name not in LEVELS:
            raise ValueError(f"unknown level {name!r}: choose one of {', '.join(LEVELS)}")
        scores: LevelScores = getattr(self, name)
        return scores

    def as_metrics(self, prefix: str) -> dict[str, float]:
        """Flat ``{prefix}{level}_{metric}`` dict plus the error-split counts."""
        out: dict[str, float] = {}
        for name in LEVELS:
            out.update(self.level(name).as_metrics(f"{prefix}{name}_"))
        out[f"{prefix}n_missed_span"] = float(self.n_missed_span)
        out[f"{prefix}n_wrong_concept"] = float(self.n_wrong_concept)
        return out


@dataclass(frozen=True)
class _Gold:
    start: int
    end: int
    keys: frozenset[str]


@dataclass(frozen=True)
class _Pred:
    start: int
    end: int
    key: str  # id_key of the predicted concept
    keys: frozenset[str]  # key and its alternative IDs' keys


class AnnotationEvaluator:
    """Scores predicted annotations against gold mentions (see module doc).

    ``doc_ids`` names the documents the predictions cover (default: those of ``mentions``);
    list documents without any gold mention too, so that predictions there count as false
    positives. A prediction for any other document is an error, not silently dropped.
    ``evaluator(predictions)`` returns the metrics; :meth:`evaluate` the
    :class:`AnnotationScores`.
    """

    def __init__(
        self,
        mentions: Iterable[Mention],
        doc_ids: Iterable[str] | None = None,
        alt_ids: AltIds | None = None,
        name: str = "annotate",
    ) -> None:
        self.name = name
        self._gold: dict[str, list[_Gold]] = defaultdict(list)
        for mention in mentions:
            if mention.start is None or mention.end is None:
                where = mention.location or mention.doc_id
                raise ValueError(
                    f"{where}: gold mention {mention.text!r} has no character offsets; "
                    "annotation needs a format with offsets (pubtator, gscplus, phenobert)"
                )
            keys = frozenset(id_key(g) for g in mention.gold_ids)
            self._gold[mention.doc_id].append(_Gold(mention.start, mention.end, keys))
        self.doc_ids = frozenset(self._gold) if doc_ids is None else frozenset(doc_ids)
        if not self.doc_ids:
            raise EmptyResultError(f"{name}: no document to evaluate annotations on")
        unknown = sorted(set(self._gold) - self.doc_ids)
        if unknown:
            raise ValueError(f"gold mentions in documents not in doc_ids: {unknown[:5]}")
        for golds in self._gold.values():
            golds.sort(key=lambda g: (g.start, g.end))
        self._keys = _key_function(alt_ids)

    @property
    def prefix(self) -> str:
        """Metric-name prefix: ``"{name}_"``."""
        return f"{self.name}_"

    @property
    def primary_metric(self) -> str:
        """The headline metric: strict mention-level F1."""
        return f"{self.prefix}mention_strict_f1"

    def __call__(self, predictions: Iterable[AnnotationLike]) -> dict[str, float]:
        """Metrics of ``predictions`` (names prefixed, see module doc)."""
        return self.evaluate(predictions).as_metrics(self.prefix)

    def evaluate(self, predictions: Iterable[AnnotationLike]) -> AnnotationScores:
        """Score ``predictions`` at every level."""
        preds = self._group(predictions)
        strict, lenient, document, span = ([0, 0, 0] for _ in LEVELS)
        missed = wrong = 0
        for doc_id in self.doc_ids:
            golds, doc_preds = self._gold.get(doc_id, []), preds.get(doc_id, [])
            linkable = [g for g in golds if g.keys]
            _add(strict, _match(linkable, doc_preds, exact=True), len(linkable), len(doc_preds))
            _add(lenient, _match(linkable, doc_preds, exact=False), len(linkable), len(doc_preds))
            _add(document, *_document_counts(golds, doc_preds))
            gold_spans = {(g.start, g.end) for g in golds}
            pred_spans = {(p.start, p.end) for p in doc_preds}
            _add(span, len(gold_spans & pred_spans), len(gold_spans), len(pred_spans))
            for gold in linkable:
                at_span = [p for p in doc_preds if (p.start, p.end) == (gold.start, gold.end)]
                if not at_span:
                    missed += 1
                elif not any(p.keys & gold.keys for p in at_span):
                    wrong += 1
        return AnnotationScores(
            _level(strict), _level(lenient), _level(document), _level(span), missed, wrong
        )

    def _group(self, predictions: Iterable[AnnotationLike]) -> dict[str, list[_Pred]]:
        seen: set[tuple[str, int, int, str]] = set()
        out: dict[str, list[_Pred]] = defaultdict(list)
        for p in predictions:
            if p.doc_id not in self.doc_ids:
                raise ValueError(
                    f"prediction for document {p.doc_id!r}, which is not among the "
                    f"{len(self.doc_ids)} evaluated documents: annotate the gold's documents only"
                )
            if not 0 <= p.start < p.end:
                raise ValueError(f"prediction in {p.doc_id!r} has bad offsets {p.start}..{p.end}")
            key = id_key(p.concept_id)
            if (p.doc_id, p.start, p.end, key) not in seen:
                seen.add((p.doc_id, p.start, p.end, key))
                out[p.doc_id].append(_Pred(p.start, p.end, key, self._keys(p.concept_id)))
        for doc_preds in out.values():
            doc_preds.sort(key=lambda p: (p.start, p.end, p.key))
        return out


def _key_function(alt_ids: AltIds | None) -> Callable[[str], frozenset[str]]:
    @functools.cache
    def keys(concept_id: str) -> frozenset[str]:
        alts = alt_ids(concept_id) if alt_ids is not None else ()
        return frozenset(id_key(i) for i in [concept_id, *alts])

    return keys


def _overlap(a: _Gold, b: _Pred) -> int:
    return min(a.end, b.end) - max(a.start, b.start)


def _match(golds: Sequence[_Gold], preds: Sequence[_Pred], exact: bool) -> int:
    """Matched pairs: each gold (in offset order) takes the unmatched prediction whose
    concept hits it and whose span is equal (``exact``) or overlaps most."""
    used: set[int] = set()
    for gold in golds:
        best, best_overlap = None, 0
        for i, pred in enumerate(preds):
            if i in used or not pred.keys & gold.keys:
                continue
            if exact and (pred.start, pred.end) != (gold.start, gold.end):
                continue
            overlap = _overlap(gold, pred)
            if overlap > best_overlap:
                best, best_overlap = i, overlap
        if best is not None:
            used.add(best)
    return len(used)


def _document_counts(golds: Sequence[_Gold], preds: Sequence[_Pred]) -> tuple[int, int, int]:
    """``(tp, n_gold, n_pred)`` of the document's concept sets."""
    gold_ids = {k for g in golds for k in g.keys}
    predicted = set()
    for pred in preds:
        hit = sorted(pred.keys & gold_ids)
        predicted.add(hit[0] if hit else pred.key)
    return len(predicted & gold_ids), len(gold_ids), len(predicted)


def _add(counts: list[int], tp: int, n_gold: int, n_pred: int) -> None:
    counts[0] += tp
    counts[1] += n_pred - tp
    counts[2] += n_gold - tp


def _level(counts: list[int]) -> LevelScores:
    tp, fp, fn = counts
    return LevelScores(tp, fp, fn)


def _ratio(num: float, den: float) -> float:
    return num / den if den else 0.0
