"""Normalization accuracy of a matcher on annotated mentions: acc@k and MRR.

For a mention with gold IDs G and the matcher's ranked concepts c_1..c_K (K = max(ks)),
candidate c_i is a *hit* when ``{id_key(c_i)} ∪ {id_key(a) : a ∈ alt_ids(c_i)}`` meets
``{id_key(g) : g ∈ G}``. The mention's rank r is the position of its first hit (none when
no c_i hits), and over a group of N mentions

    acc@k = (1/N) Σ 1[r ≤ k]            MRR = (1/N) Σ 1/r   (0 when there is no hit in top K)

Mentions are scored in three groups, each reported separately:

* **simple** (one gold ID): ``acc@k`` and ``mrr``, the headline figures (primary: ``acc@1``).
* **composite** (several gold IDs): ``composite_acc@k`` with the rule above (*any* gold ID
  hit), and ``composite_parts_acc@k`` with the triplet/sieve paper's rule: the text is split
  into its parts (:func:`~termnorm.mentions.composite.split_composite`, or the dataset's
  own parts), each part is queried, and r = max over parts of each part's first-hit rank
  (correct at k only when every part has a hit within its top k; a part may hit any of G).
* **unlinkable** (``-1``, CUI-less): no concept can be right, so they are only counted.

``all_acc@k``/``all_mrr`` pool simple and composite mentions, composites scored by
``composite_rule`` (``any`` by default). Blank mention texts are not sent to the matcher and
count as misses (``n_blank``); texts the matcher refuses as queries
(:class:`~termnorm.search.QueryError`, e.g. too long) count as misses too (``n_failed``, the
message kept in the predictions); any other error of the matcher stops the evaluation. Metric names carry the evaluator's name as a prefix
(``normalize_acc@1``); composite keys are absent when the dataset has no composite mention.
Counts: ``n`` (every mention), ``n_simple``, ``n_composite``, ``n_unlinkable``, ``n_blank``,
``n_failed``.

Abbreviations (``expansions``, one :class:`~termnorm.mentions.abbreviations.Expansion` per
mention, from its document): a mention that its document's short forms expanded is searched
as written and expanded, and ``choice``
(:class:`~termnorm.search.context.ExpansionChoice`) keeps one of the two rankings; the
candidates of a kept expanded ranking carry ``expanded_from``. Composite parts are split from
the text as written. ``n_expanded`` (present only with ``expansions``) counts the mentions
answered through their expanded text.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from termnorm.errors import EmptyResultError
from termnorm.evaluation.predictions import MentionResult, prediction_record, write_records
from termnorm.kg.ids import id_key
from termnorm.mentions import Mention, MentionKind
from termnorm.mentions.abbreviations import Expansion
from termnorm.mentions.composite import CompositeRule, split_composite
from termnorm.search.candidate import Candidate, Matcher
from termnorm.search.context import ExpansionChoice
from termnorm.search.query import QueryError

__all__ = [
    "COUNT_KEYS",
    "DEFAULT_KS",
    "CompositeRule",
    "MentionResult",
    "NormalizationEvaluator",
    "NormalizationReport",
    "matcher_keys",
    "query_matcher",
    "rank_metrics",
]

logger = logging.getLogger(__name__)

DEFAULT_KS = (1, 3, 5, 10)
COUNT_KEYS = frozenset(
    {"n", "n_simple", "n_composite", "n_unlinkable", "n_blank", "n_failed", "n_expanded"}
)


def rank_metrics(ranks: Sequence[int | None], ks: Sequence[int], prefix: str) -> dict[str, float]:
    """``{prefix}acc@k`` for each k and ``{prefix}mrr`` from first-hit ranks (``None`` = miss)."""
    n = len(ranks)
    out = {f"{prefix}acc@{k}": sum(r is not None and r <= k for r in ranks) / n for k in ks}
    out[f"{prefix}mrr"] = sum(1.0 / r for r in ranks if r is not None) / n
    return out


@dataclass
class NormalizationReport:
    """Metrics plus one :class:`MentionResult` per mention, in dataset order."""

    metrics: dict[str, float]
    results: list[MentionResult]

    def write_predictions(self, path: str | Path) -> Path:
        """Write the predictions file: one record per mention, in dataset order (the format
        is :mod:`termnorm.evaluation.predictions`'s)."""
        return write_records(path, map(prediction_record, self.results))


class NormalizationEvaluator:
    """acc@k and MRR of a :class:`~termnorm.search.Matcher` on mentions (see module doc).

    ``evaluator(matcher)`` returns the metrics; :meth:`evaluate` also returns the per-mention
    results for a predictions dump.
    """

    def __init__(
        self,
        mentions: Iterable[Mention],
        ks: Sequence[int] = DEFAULT_KS,
        name: str = "normalize",
        composite_rule: CompositeRule | str = CompositeRule.ANY,
        expansions: Sequence[Expansion] | None = None,
        choice: ExpansionChoice | None = None,
    ) -> None:
        self.mentions = list(mentions)
        if expansions is not None and len(expansions) != len(self.mentions):
            raise ValueError(
                f"{len(expansions)} expansions for {len(self.mentions)} mentions: give one each"
            )
        self.expansions = None if expansions is None else list(expansions)
        self.choice = choice or ExpansionChoice()
        self.ks = tuple(sorted(set(ks)))
        if not self.ks or self.ks[0] < 1:
            raise ValueError(f"ks must be positive integers, got {tuple(ks)}")
        self.name = name
        self.composite_rule = CompositeRule(composite_rule)
        self.n_simple = sum(m.kind is MentionKind.SIMPLE for m in self.mentions)
        if self.n_simple == 0:
            raise EmptyResultError(
                f"{name}: no simple mention (one gold ID) among {len(self.mentions)} to evaluate"
            )

    @property
    def prefix(self) -> str:
        """Metric-name prefix: ``"{name}_"``."""
        return f"{self.name}_"

    @property
    def primary_metric(self) -> str:
        """The headline metric: accuracy at the smallest k over simple mentions."""
        return f"{self.prefix}acc@{self.ks[0]}"

    def __call__(self, matcher: Matcher) -> dict[str, float]:
        """Metrics of ``matcher`` on the mentions (names prefixed, see module doc)."""
        return self.evaluate(matcher).metrics

    def evaluate(self, matcher: Matcher) -> NormalizationReport:
        """Query ``matcher`` once per distinct text and score every mention."""
        parts = [self._parts(m) for m in self.mentions]
        expansions = self.expansions or [Expansion(m.text, None) for m in self.mentions]
        texts = {m.text for m in self.mentions if m.text.strip()}
        texts.update(p for ps in parts for p in ps)  # parts are never blank
        texts.update(e.text for e in expansions if e.expanded_from is not None)
        ranked, errors = query_matcher(matcher, sorted(texts), self.ks[-1])
        keys = matcher_keys(matcher)
        results = []
        for mention, mention_parts, expansion in zip(self.mentions, parts, expansions, strict=True):
            gold = {id_key(g) for g in mention.gold_ids}
            candidates = ranked.get(mention.text, ())
            query = None
            if expansion.expanded_from is not None and mention.text.strip():
                kept = self.choice.keep(
                    candidates, ranked.get(expansion.text, ()), expansion.expanded_from
                )
                if kept is not None:
                    candidates, query = tuple(kept), expansion.text
            hits = tuple(bool(keys(c.concept_id) & gold) for c in candidates)
            part_ranks = tuple(_first_hit(keys, ranked.get(p, ()), gold) for p in mention_parts)
            error = errors.get(mention.text) or next(
                (errors[p] for p in mention_parts if p in errors), None
            )
            results.append(
                MentionResult(
                    mention, candidates, hits, _rank(hits), mention_parts, part_ranks, error, query
                )
            )
        return NormalizationReport(self._metrics(results), results)

    # ----------------------------------------------------------------- internals
    def _parts(self, mention: Mention) -> tuple[str, ...]:
        if mention.kind is not MentionKind.COMPOSITE or not mention.text.strip():
            return ()
        return mention.parts or split_composite(mention.text)

    def _metrics(self, results: list[MentionResult]) -> dict[str, float]:
        p = self.prefix
        by_kind: dict[MentionKind, list[MentionResult]] = {kind: [] for kind in MentionKind}
        for r in results:
            by_kind[r.mention.kind].append(r)
        simple, composite = by_kind[MentionKind.SIMPLE], by_kind[MentionKind.COMPOSITE]
        out = rank_metrics([r.rank for r in simple], self.ks, p)
        if composite:
            out.update(rank_metrics([r.rank for r in composite], self.ks, f"{p}composite_"))
            out.update(
                rank_metrics([r.parts_rank for r in composite], self.ks, f"{p}composite_parts_")
            )
        use_parts = self.composite_rule is CompositeRule.PARTS
        pooled = [r.rank for r in simple] + [
            r.parts_rank if use_parts else r.rank for r in composite
        ]
        out.update(rank_metrics(pooled, self.ks, f"{p}all_"))
        out[f"{p}n"] = float(len(results))
        out[f"{p}n_simple"] = float(len(simple))
        out[f"{p}n_composite"] = float(len(composite))
        out[f"{p}n_unlinkable"] = float(len(by_kind[MentionKind.UNLINKABLE]))
        out[f"{p}n_blank"] = float(sum(not r.mention.text.strip() for r in results))
        out[f"{p}n_failed"] = float(sum(r.error is not None for r in results))
        if self.expansions is not None:
            out[f"{p}n_expanded"] = float(sum(r.query is not None for r in results))
        return out


def query_matcher(
    matcher: Matcher, texts: Sequence[str], k: int
) -> tuple[dict[str, tuple[Candidate, ...]], dict[str, str]]:
    """Top-``k`` candidates per text, and the message of each text the matcher refused.

    One batch call; if the matcher refuses a query (:class:`QueryError`), every text is
    retried alone so that the texts it refuses are reported (their message kept) instead of
    sinking the run. When it refuses every text, the first refusal is raised. Other errors
    propagate.
    """
    logger.info("querying %s with %d distinct texts (k=%d)", matcher.name, len(texts), k)
    try:
        rows = matcher.normalize_batch(list(texts), k=k) if texts else []
    except QueryError as exc:
        logger.warning("%s refused a query (%s); retrying text by text", matcher.name, exc)
        return _query_each(matcher, texts, k)
    if len(rows) != len(texts):
        raise ValueError(
            f"matcher {matcher.name!r} returned {len(rows)} rows for {len(texts)} texts"
        )
    return {t: tuple(row[:k]) for t, row in zip(texts, rows, strict=True)}, {}


def _query_each(
    matcher: Matcher, texts: Sequence[str], k: int
) -> tuple[dict[str, tuple[Candidate, ...]], dict[str, str]]:
    ranked: dict[str, tuple[Candidate, ...]] = {}
    errors: dict[str, str] = {}
    first: QueryError | None = None
    for text in texts:
        try:
            ranked[text] = tuple(matcher.normalize_batch([text], k=k)[0][:k])
        except QueryError as exc:
            first = first or exc
            errors[text] = f"{type(exc).__name__}: {exc}"
    if first is not None and not ranked:
        raise first
    return ranked, errors


def matcher_keys(matcher: Matcher) -> Callable[[str], frozenset[str]]:
    """``concept_id -> {id_key(id), id_key(alt) ...}`` through ``matcher.alt_ids`` (cached), so
    that an ID and its concept's alternative IDs compare equal."""

    @functools.cache
    def keys(concept_id: str) -> frozenset[str]:
        return frozenset(id_key(i) for i in [concept_id, *matcher.alt_ids(concept_id)])

    return keys


def _rank(hits: Sequence[bool]) -> int | None:
    return next((i for i, hit in enumerate(hits, 1) if hit), None)


def _first_hit(
    keys: Callable[[str], frozenset[str]], candidates: Sequence[Candidate], gold: set[str]
) -> int | None:
    return _rank([bool(keys(c.concept_id) & gold) for c in candidates])
