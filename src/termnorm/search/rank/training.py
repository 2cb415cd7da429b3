"""Training a ranker on the candidates the recall stage really returns: ``termnorm rank train``.

The training pairs come from the **same search configuration used at inference**: the
index, its recall model, the strategy (e.g. D-T+OD-T) and its domain synonyms, the
abbreviations of each mention's document. For every training mention with gold IDs the
query texts are its text and, when its document defines a short form in it, its expanded
text (inference searches both, :mod:`termnorm.search.context`). The recall stage returns
``k_c`` candidates per query; each gives a pair (query, :func:`candidate_text`) labelled 1
when the candidate is one of the mention's gold concepts (its ID or an alternative ID),
else 0 (paper §3.2).

**Cross-fitting.** When a synonym file is also a training-mention file (D-T + OD-T with the
training split as domain synonyms), a training mention would find its own entry as an exact
hit and the ranker would learn from candidate lists easier than any it meets. Documents are
then split into ``folds`` groups (seeded); the mentions of group g are searched in a space
whose domain synonyms hold the mentions of the other groups only (plus any synonym file that
is not a training file), so a mention never finds its own entry, nor one from its own document.
A format without documents (``tsv``) is cross-fitted by mention.

:func:`train_ranker` then trains the cross-encoder (:mod:`termnorm.training.ranker`) and
writes the ranker folder (:func:`~termnorm.search.rank.ranker.save_ranker`) whose card says
which index, recall model, strategy, k_c, keyword file and data made it.
"""

from __future__ import annotations

import logging
import random
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from termnorm.encoders.cross_encoder import DEFAULT_PAIR_LENGTH, KeywordCrossEncoder
from termnorm.encoders.fingerprint import model_fingerprint
from termnorm.encoders.memo import MemoEncoder
from termnorm.encoders.transformer import default_model_path
from termnorm.index.term_index import TermIndex
from termnorm.kg.ids import id_key
from termnorm.kg.keywords import builtin_keywords_path, read_keywords
from termnorm.mentions import Mention, MentionKind, detect_format, read_mentions
from termnorm.mentions.abbreviations import AbbreviationMode, DocumentAbbreviations
from termnorm.mentions.documents import DOCUMENT_FORMATS, read_documents
from termnorm.mentions.synonyms import mention_pairs, read_synonyms
from termnorm.search.candidate import Candidate
from termnorm.search.defaults import DEFAULT_SIEVE_THRESHOLD, default_strategy
from termnorm.search.domain import SearchSpace
from termnorm.search.matcher import build_strategy
from termnorm.search.rank.fusion import DEFAULT_K_C
from termnorm.search.rank.ranker import file_sha256, index_identity, save_ranker
from termnorm.search.rank.texts import candidate_text
from termnorm.search.strategies import parse_strategy
from termnorm.training.ranker import RankerTrainConfig, RankPair, train_cross_encoder

__all__ = [
    "DEFAULT_FOLDS",
    "Query",
    "RankTrainSpec",
    "build_queries",
    "recall_candidates",
    "train_ranker",
    "training_pairs",
]

logger = logging.getLogger(__name__)

DEFAULT_FOLDS = 5
Pair = tuple[str, tuple[str, ...]]


@dataclass(frozen=True)
class Query:
    """One training query: the text searched, the mention's gold IDs, its document."""

    text: str
    gold_ids: tuple[str, ...]
    doc_id: str


@dataclass(frozen=True)
class RankTrainSpec:
    """Everything ``termnorm rank train`` needs (module doc); paths as given by the user.

    ``strategy``: default ``d-t+od-t`` with synonyms, else ``o-t``. ``keywords``: default the
    shipped vocabulary of ``lang``. ``abbreviations``: default ab3p for formats that carry
    their documents. ``max_queries``: train on a seeded sample of that many queries (all when
    ``None``). ``base_model``: the model folder the cross-encoder starts from (default
    all-MiniLM-L6-v2).
    """

    index: Path
    mentions: tuple[Path, ...]
    mention_format: str | None = None
    synonyms: tuple[Path, ...] = ()
    synonyms_format: str | None = None
    strategy: str | None = None
    threshold: float = DEFAULT_SIEVE_THRESHOLD
    keywords: Path | None = None
    lang: str = "en"
    plain: bool = False
    k_c: int = DEFAULT_K_C
    folds: int = DEFAULT_FOLDS
    abbreviations: AbbreviationMode | None = None
    base_model: Path | None = None
    max_length: int = DEFAULT_PAIR_LENGTH
    max_queries: int | None = None
    seed: int = 0
    threads: int | None = None
    freeze_embeddings: bool = True
    train: RankerTrainConfig = field(default_factory=RankerTrainConfig)

    @property
    def resolved_strategy(self) -> str:
        """The strategy searched (default per the class doc)."""
        return self.strategy or default_strategy(bool(self.synonyms))


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


def _fold_of(doc_ids: Iterable[str], folds: int, seed: int) -> dict[str, int]:
    docs = sorted(set(doc_ids))
    random.Random(seed).shuffle(docs)
    return {d: i % folds for i, d in enumerate(docs)}


def recall_candidates(
    space: SearchSpace,
    strategy: str,
    threshold: float,
    queries: Sequence[Query],
    k_c: int,
    fixed_synonyms: Sequence[Pair] = (),
    crossfit_synonyms: Sequence[tuple[str, Pair]] = (),
    folds: int = DEFAULT_FOLDS,
    seed: int = 0,
) -> list[list[Candidate]]:
    """The top-``k_c`` candidates of each query (module doc).

    ``fixed_synonyms``: domain synonyms every query may find; ``crossfit_synonyms``:
    ``(doc_id, pair)`` synonyms a query finds only when they come from a document of another
    fold. ``space`` holds no domain synonyms of its own here.
    """
    out: list[list[Candidate]] = [[] for _ in queries]
    fold = _fold_of([d for d, _ in crossfit_synonyms] + [q.doc_id for q in queries], folds, seed)
    groups: dict[int, list[int]] = defaultdict(list)
    for i, q in enumerate(queries):
        groups[fold[q.doc_id] if crossfit_synonyms else 0].append(i)
    for g, rows in sorted(groups.items()):
        pairs = list(fixed_synonyms)
        pairs += [p for d, p in crossfit_synonyms if fold[d] != g]
        fold_space = space.with_synonyms(pairs)[0] if pairs else space
        matcher = build_strategy(fold_space, strategy, threshold)
        results = matcher.normalize_rows([queries[i].text for i in rows], k_c)
        for i, result in zip(rows, results, strict=True):
            out[i] = result.candidates
        logger.info("recall fold %d: %d queries, %d synonyms", g, len(rows), len(pairs))
    return out


def training_pairs(
    queries: Sequence[Query],
    candidate_lists: Sequence[Sequence[Candidate]],
    index: TermIndex,
) -> tuple[list[RankPair], dict[str, float]]:
    """Labelled pairs (module doc) and recall statistics of the training queries:
    ``recall_at_1``, ``recall_at_k_c`` (the share of queries with a gold candidate first /
    anywhere), ``queries``, ``pairs``, ``positives``."""
    keys: dict[str, frozenset[str]] = {}

    def concept_keys(cid: str) -> frozenset[str]:
        if cid not in keys:
            keys[cid] = frozenset(id_key(x) for x in (cid, *index.alt_ids(cid)))
        return keys[cid]

    pairs: list[RankPair] = []
    first = anywhere = 0
    for query, candidates in zip(queries, candidate_lists, strict=True):
        gold = {id_key(g) for g in query.gold_ids}
        hits = [bool(concept_keys(c.concept_id) & gold) for c in candidates]
        first += bool(hits and hits[0])
        anywhere += any(hits)
        pairs.extend(
            RankPair(query.text, candidate_text(c), 1.0 if hit else 0.0)
            for c, hit in zip(candidates, hits, strict=True)
        )
    n = max(1, len(queries))
    stats = {
        "queries": float(len(queries)),
        "pairs": float(len(pairs)),
        "positives": float(sum(p.label > 0.5 for p in pairs)),
        "recall_at_1": first / n,
        "recall_at_k_c": anywhere / n,
    }
    return pairs, stats


def _same(a: Path, b: Path) -> bool:
    return a.resolve() == b.resolve()


def train_ranker(spec: RankTrainSpec, out: str | Path, show_progress: bool = False) -> Path:
    """Recall the training candidates, train the cross-encoder, write the ranker folder."""
    spec.train.validate()
    if spec.k_c < 1 or spec.folds < 2:
        raise ValueError("k_c must be >= 1 and folds >= 2")
    keywords_file = None if spec.plain else (spec.keywords or builtin_keywords_path(spec.lang))
    keywords = read_keywords(keywords_file) if keywords_file is not None else None
    index = TermIndex.load(spec.index)
    encoder = index.load_encoder()
    encoder.set_runtime("torch", threads=spec.threads)
    space = SearchSpace(index, MemoEncoder(encoder))

    mentions: list[Mention] = []
    expanded: list[str | None] = []
    data: list[dict[str, Any]] = []
    for path in spec.mentions:
        found, fmt = _read(path, spec.mention_format)
        mode = spec.abbreviations or (
            AbbreviationMode.AB3P if fmt in DOCUMENT_FORMATS else AbbreviationMode.NONE
        )
        texts: list[str | None] = [None] * len(found)
        if mode is AbbreviationMode.AB3P:
            docs = DocumentAbbreviations(read_documents(path, fmt), mode)
            texts = [
                e.text if e.expanded_from is not None else None for e in docs.expand_mentions(found)
            ]
        mentions += found
        expanded += texts
        data.append(
            {"path": str(path), "format": fmt, "mentions": len(found), "abbreviations": mode.value}
        )
    queries = build_queries(mentions, expanded)
    if spec.max_queries is not None and spec.max_queries < len(queries):
        queries = random.Random(spec.seed).sample(queries, spec.max_queries)

    fixed: list[Pair] = []
    crossfit: list[tuple[str, Pair]] = []
    synonym_cards = []
    for path in spec.synonyms:
        is_training = any(_same(path, m) for m in spec.mentions)
        if is_training:
            found, _fmt = _read(path, spec.synonyms_format or spec.mention_format)
            crossfit += [(m.doc_id, p) for m in found for p in mention_pairs([m])]
        else:
            fixed += read_synonyms(path, spec.synonyms_format)
        synonym_cards.append({"path": str(path), "cross_fitted": is_training})
    strategy = spec.resolved_strategy
    logger.info("recalling %d training queries with %s (k_c=%d)", len(queries), strategy, spec.k_c)
    lists = recall_candidates(
        space, strategy, spec.threshold, queries, spec.k_c, fixed, crossfit, spec.folds, spec.seed
    )
    pairs, recall_stats = training_pairs(queries, lists, index)

    base = spec.base_model or default_model_path()
    model = KeywordCrossEncoder.from_pretrained(
        base, keywords, spec.plain, spec.max_length, seed=spec.seed
    )
    if spec.freeze_embeddings:
        model.model.get_input_embeddings().weight.requires_grad_(False)
    stats = train_cross_encoder(model, pairs, replace(spec.train, seed=spec.seed), show_progress)
    card = {
        "base_model": {"path": str(Path(base).resolve()), "fingerprint": model_fingerprint(base)},
        "index": {"path": str(Path(spec.index).resolve()), **index_identity(index)},
        "recall_model": index.card["model"].get("path"),
        "strategy": str(parse_strategy(strategy)),
        "sieve_threshold": spec.threshold,
        "k_c": spec.k_c,
        "max_length": spec.max_length,
        "synonyms": synonym_cards,
        "cross_fitting": {"folds": spec.folds, "seed": spec.seed} if crossfit else None,
        "training_data": data,
        "training": {
            **spec.train.to_dict(),
            "seed": spec.seed,
            "max_queries": spec.max_queries,
            "freeze_embeddings": spec.freeze_embeddings,
        },
        "metrics": {**recall_stats, **stats.to_dict()},
    }
    if keywords_file is not None:
        card["keywords_lang"] = keywords.lang if keywords is not None else None
        card["keywords_sha256"] = file_sha256(keywords_file)
    return save_ranker(model, card, out, keywords_file)
