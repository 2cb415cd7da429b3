"""The training data of the learned stages: queries from annotated mentions, cross-fitted.

Shared by the ranker, hybrid recall's weight and the learned combiner. Each training mention
with gold IDs gives its text and, when its document defines a short form in it, the expanded
text (inference searches both, :mod:`termnorm.search.context`).

**Cross-fitting.** When a synonym file is also a training-mention file, a mention would find
its own entry as an exact hit and a learned stage would learn from lists easier than any it
meets. Documents are then split into ``folds`` seeded groups; the mentions of group g are
searched with the domain synonyms of the other groups only (plus any synonym file that is
not a training file). A format without documents (``tsv``) is cross-fitted by mention.
"""

from __future__ import annotations

import logging
import random
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from termnorm.encoders.memo import MemoEncoder
from termnorm.index.term_index import TermIndex
from termnorm.kg.ids import id_key
from termnorm.mentions import Mention, MentionFormat, MentionKind, detect_format, read_mentions
from termnorm.mentions.documents import DOCUMENT_FORMATS
from termnorm.mentions.synonyms import mention_pairs, read_synonyms
from termnorm.search.build import fit_recall, search_space
from termnorm.search.candidate import Candidate
from termnorm.search.context import file_expansions
from termnorm.search.domain import SearchSpace
from termnorm.search.stages.fit_spec import DEFAULT_FOLDS, TrainingDataSpec

if TYPE_CHECKING:
    from termnorm.encoders.protocols import Encoder

__all__ = [
    "DEFAULT_FOLDS",
    "Pair",
    "Query",
    "TrainingData",
    "TrainingDataSpec",
    "build_queries",
    "crossfit_map",
    "gold_hits",
    "holdout_documents",
    "load_training_data",
    "recall_candidates",
    "sample_queries",
    "training_space",
]

logger = logging.getLogger(__name__)

T = TypeVar("T")
Pair = tuple[str, tuple[str, ...]]


@dataclass(frozen=True)
class Query:
    """One training query: the text searched, the mention's gold IDs, its document."""

    text: str
    gold_ids: tuple[str, ...]
    doc_id: str


@dataclass(frozen=True)
class TrainingData:
    """Training queries and the domain synonyms they may find: ``fixed`` (every query),
    ``crossfit`` (``(doc_id, pair)``, only from another fold); ``cards`` and
    ``synonym_cards`` describe the inputs for an artifact's card."""

    queries: list[Query]
    fixed: list[Pair]
    crossfit: list[tuple[str, Pair]]
    cards: list[dict[str, Any]]
    synonym_cards: list[dict[str, Any]]


def _read(path: Path, fmt: str | None) -> tuple[list[Mention], str]:
    """The mentions of ``path`` and their format. Without documents (``tsv``: the file is one
    "document"), each mention is its own group for cross-fitting."""
    fmt = fmt or detect_format(path).value
    found = read_mentions(path, fmt)
    if fmt not in DOCUMENT_FORMATS:
        found = [replace(m, doc_id=f"{m.doc_id}#{i}") for i, m in enumerate(found)]
    return found, fmt


def build_queries(
    mentions: Iterable[Mention],
    expansions: Sequence[str | None] | None = None,
) -> list[Query]:
    """Queries of the linkable mentions: the text, plus the expanded text when there is one
    (``expansions[i]``: mention i's expanded text or ``None``). A (text, gold IDs) seen
    before is kept once, with the document it was first seen in (a frequent mention would
    otherwise weigh its count of times in the loss and in the training time)."""
    out: dict[tuple[str, tuple[str, ...]], Query] = {}
    for i, m in enumerate(mentions):
        if m.kind is MentionKind.UNLINKABLE or not m.text.strip():
            continue
        texts = [m.text]
        if expansions is not None and expansions[i] not in (None, m.text):
            texts.append(str(expansions[i]))
        for text in texts:
            out.setdefault((text, m.gold_ids), Query(text, m.gold_ids, m.doc_id))
    return list(out.values())


def sample_queries(queries: list[Query], max_queries: int | None, seed: int) -> list[Query]:
    """A seeded sample of ``max_queries`` queries (all of them when ``None`` or more)."""
    if max_queries is None or max_queries >= len(queries):
        return queries
    return random.Random(seed).sample(queries, max_queries)


def holdout_documents(doc_ids: Iterable[str], fraction: float, seed: int) -> frozenset[str]:
    """A seeded ``fraction`` of the documents (at least one when ``fraction > 0``), kept out of
    a ranker's training so that the combiner can be fitted on mentions the ranker never saw
    (stacking). ``ValueError`` unless ``0 <= fraction < 1``."""
    if not 0 <= fraction < 1:
        raise ValueError(f"the held-out fraction must be in [0, 1), got {fraction}")
    docs = sorted(set(doc_ids))
    if fraction == 0 or not docs:
        return frozenset()
    random.Random(f"holdout-{seed}").shuffle(docs)
    return frozenset(docs[: max(1, round(fraction * len(docs)))])


def _fold_of(doc_ids: Iterable[str], folds: int, seed: int) -> dict[str, int]:
    docs = sorted(set(doc_ids))
    random.Random(seed).shuffle(docs)
    return {d: i % folds for i, d in enumerate(docs)}


def crossfit_map(
    space: SearchSpace,
    queries: Sequence[Query],
    run: Callable[[SearchSpace, list[str]], Sequence[T]],
    fixed_synonyms: Sequence[Pair] = (),
    crossfit_synonyms: Sequence[tuple[str, Pair]] = (),
    folds: int = DEFAULT_FOLDS,
    seed: int = 0,
) -> list[T]:
    """``run(fold_space, texts)`` for each fold's queries, answers back in query order.

    ``fixed_synonyms``: domain synonyms every query may find; ``crossfit_synonyms``:
    ``(doc_id, pair)`` synonyms a query finds only when they come from a document of another
    fold (module doc). ``space`` holds no domain synonyms of its own here.
    """
    out: list[T | None] = [None] * len(queries)
    fold = _fold_of([d for d, _ in crossfit_synonyms] + [q.doc_id for q in queries], folds, seed)
    groups: dict[int, list[int]] = defaultdict(list)
    for i, q in enumerate(queries):
        groups[fold[q.doc_id] if crossfit_synonyms else 0].append(i)
    for g, rows in sorted(groups.items()):
        pairs = list(fixed_synonyms)
        pairs += [p for d, p in crossfit_synonyms if fold[d] != g]
        fold_space = space.with_synonyms(pairs)[0] if pairs else space
        answers = run(fold_space, [queries[i].text for i in rows])
        for i, answer in zip(rows, answers, strict=True):
            out[i] = answer
        logger.info("recall fold %d: %d queries, %d synonyms", g, len(rows), len(pairs))
    return cast("list[T]", out)  # every query belongs to one fold


def recall_candidates(
    spec: TrainingDataSpec,
    space: SearchSpace,
    queries: Sequence[Query],
    data: TrainingData,
    stage: str = "ranker",
) -> list[list[Candidate]]:
    """The top-``spec.k_c`` candidates of each query, recalled as ``build(spec)`` recalls
    before ``stage`` (:func:`~termnorm.search.build.fit_recall`), cross-fitted over
    ``data``'s synonyms (:func:`crossfit_map`)."""

    def run(fold_space: SearchSpace, texts: list[str]) -> list[list[Candidate]]:
        matcher = fit_recall(spec, fold_space, stage)
        return [r.candidates for r in matcher.normalize_rows(texts, spec.k_c)]

    return crossfit_map(space, queries, run, data.fixed, data.crossfit, spec.folds, spec.seed)


def load_training_data(spec: TrainingDataSpec) -> TrainingData:
    """Queries of ``spec.mentions`` (abbreviations default: ab3p for formats that carry their
    documents) and the synonyms, a synonym file that is also a mention file cross-fitted;
    ``spec.max_queries``: a seeded sample of that many queries."""
    given = None if spec.mention_format is None else MentionFormat(spec.mention_format).value
    found_all: list[Mention] = []
    expanded: list[str | None] = []
    cards: list[dict[str, Any]] = []
    for path in spec.mentions:
        found, fmt = _read(path, given)
        mode, expansions = file_expansions(path, fmt, found, spec.abbreviations)
        found_all += found
        expanded += (
            [None] * len(found)
            if expansions is None
            else [e.text if e.expanded_from is not None else None for e in expansions]
        )
        cards.append(
            {"path": str(path), "format": fmt, "mentions": len(found), "abbreviations": mode.value}
        )
    queries = sample_queries(build_queries(found_all, expanded), spec.max_queries, spec.seed)
    fixed: list[Pair] = []
    crossfit: list[tuple[str, Pair]] = []
    synonym_cards = []
    for path in spec.synonyms:
        is_training = any(path.resolve() == m.resolve() for m in spec.mentions)
        if is_training:
            found, _fmt = _read(path, spec.synonyms_format or given)
            crossfit += [(m.doc_id, p) for m in found for p in mention_pairs([m])]
        else:
            fixed += read_synonyms(path, spec.synonyms_format)
        synonym_cards.append({"path": str(path), "cross_fitted": is_training})
    return TrainingData(queries, fixed, crossfit, cards, synonym_cards)


def training_space(spec: TrainingDataSpec) -> SearchSpace:
    """The search space ``build(spec)`` searches (index, encoder, runtime, threads), without
    domain synonyms (the folds add theirs), its encoder behind a query memo
    (:class:`~termnorm.encoders.memo.MemoEncoder`)."""
    space = search_space(spec.index, spec.runtime.value, spec.threads, spec.model)
    return SearchSpace(space.index, MemoEncoder(cast("Encoder", space.encoder)))


def gold_hits(
    queries: Sequence[Query], candidate_lists: Sequence[Sequence[Candidate]], index: TermIndex
) -> list[list[bool]]:
    """For each query, which of its candidates is one of its gold concepts (ID or alt ID)."""
    keys: dict[str, frozenset[str]] = {}

    def concept_keys(cid: str) -> frozenset[str]:
        if cid not in keys:
            keys[cid] = frozenset(id_key(x) for x in (cid, *index.alt_ids(cid)))
        return keys[cid]

    out = []
    for query, candidates in zip(queries, candidate_lists, strict=True):
        gold = {id_key(g) for g in query.gold_ids}
        out.append([bool(concept_keys(c.concept_id) & gold) for c in candidates])
    return out
