"""Train:O and Train:OD texts for the triplet network, and batches where every anchor has a positive.

Train:O  = every (concept, synonym) pair of the ontology (the KG's ``terms`` table, exact
           duplicates within a concept removed).
Train:OD = Train:O plus the annotated training mentions (texts with one gold concept), the
           mentions repeated (or, when there are more than needed, subsampled) so that
           |D| / |O| = ``ratio`` (1/3 by default, as in Xu & Bethard 2021, section 4.2).

Mentions come in as ``(text, gold_ids)`` pairs (:func:`termnorm.training.data.training_mentions`
reads the files).
Gold IDs are matched to KG concepts with :func:`termnorm.kg.ids.id_key` against each concept's
``concept_id`` and ``alt_ids``. Composite mentions (several gold IDs), unlinkable ones (``-1``,
``CUI-less``), empty texts and IDs absent from the KG are dropped and counted by reason.

Batches (:class:`AnchorPositiveSampler`): P groups × K texts; a group is an anchor text plus
K − 1 other texts of its concept, so every anchor has at least one positive (the paper samples
one positive per anchor, K = 2). Concepts with a single text cannot be anchors; they are left
out of the batches and counted in the report.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence, Sized
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from termnorm.kg import KnowledgeGraph, id_key
from termnorm.training.config import TrainData

__all__ = [
    "DEFAULT_OD_RATIO",
    "UNUSABLE",
    "AnchorPositiveSampler",
    "LabelledText",
    "TrainData",
    "TripletCorpus",
    "build_triplet_corpus",
    "check_kept",
    "concept_key_map",
    "mention_texts",
    "repeat_to_ratio",
]

logger = logging.getLogger(__name__)

DEFAULT_OD_RATIO = 1.0 / 3.0
UNUSABLE = "all composite, unlinkable or unknown to the KG"
"""Why no mention of a Train:OD run was usable."""
UNLINKABLE = frozenset({"-1", "CUI-LESS", "CUILESS", "NIL", ""})


@dataclass(frozen=True, slots=True)
class LabelledText:
    """One training text, its concept, and where it came from (``O`` ontology, ``D`` data)."""

    text: str
    concept_id: str
    source: str


def concept_key_map(kg: KnowledgeGraph) -> dict[str, str]:
    """``id_key(any ID) -> concept_id``; a concept's own ID wins over another's alt ID, then
    the smaller concept ID (so the mapping is deterministic)."""
    own: dict[str, str] = {}
    alt: dict[str, str] = {}
    for cid, alts in zip(kg.concepts["concept_id"], kg.concepts["alt_ids"], strict=True):
        own.setdefault(id_key(cid), cid)
        for a in alts:
            key = id_key(a)
            if key not in alt or cid < alt[key]:
                alt[key] = cid
    return {**alt, **own}


def mention_texts(
    mentions: Iterable[tuple[str, Sequence[str]]], keys: Mapping[str, str]
) -> tuple[list[LabelledText], Counter[str]]:
    """Mentions with exactly one gold concept known to the KG, and the drop counts by reason."""
    kept: list[LabelledText] = []
    dropped: Counter[str] = Counter()
    for text, gold in mentions:
        text = text.strip()
        ids = [g.strip() for g in gold if g.strip()]
        if not text:
            dropped["empty text"] += 1
        elif not ids or any(g.upper() in UNLINKABLE for g in ids):
            dropped["unlinkable"] += 1
        elif len(set(map(id_key, ids))) > 1:
            dropped["composite"] += 1
        elif id_key(ids[0]) not in keys:
            dropped["concept not in KG"] += 1
        else:
            kept.append(LabelledText(text, keys[id_key(ids[0])], "D"))
    return kept, dropped


def check_kept(who: str, kept: Sized, dropped: Mapping[str, int], why: str) -> None:
    """Log each reason training mentions were dropped for (``dropped``: counts by reason).

    Raises:
        ValueError: ``kept`` is empty: ``who`` found no usable training mention, ``why`` and
            the drop counts.
    """
    if not kept:
        raise ValueError(
            f"{who} found no usable training mention ({why}; dropped: {dict(dropped)})"
        )
    for reason, n in sorted(dropped.items()):
        logger.info("%s: %d training mentions dropped (%s)", who, n, reason)


def repeat_to_ratio(
    domain: Sequence[LabelledText], n_ontology: int, ratio: float, seed: int = 0
) -> list[LabelledText]:
    """``round(ratio · n_ontology)`` domain texts: whole copies of ``domain``, then a seeded
    random subset of it for the remainder (a subset alone when ``domain`` is larger)."""
    if ratio <= 0:
        raise ValueError(f"the D/O ratio must be > 0, got {ratio}")
    if not domain:
        return []
    target = round(ratio * n_ontology)
    copies, rest = divmod(target, len(domain))
    rng = np.random.default_rng(seed)
    extra = [domain[int(i)] for i in np.sort(rng.permutation(len(domain))[:rest])]
    return list(domain) * copies + extra


@dataclass
class TripletCorpus:
    """Texts with integer labels, ready for :class:`AnchorPositiveSampler`, plus a report."""

    items: list[LabelledText]
    train_data: TrainData
    ratio: float | None
    dropped: Counter[str] = field(default_factory=Counter)

    @property
    def texts(self) -> list[str]:
        """Texts in item order."""
        return [it.text for it in self.items]

    @property
    def labels(self) -> list[int]:
        """Integer concept labels in item order (concepts numbered by first appearance)."""
        index: dict[str, int] = {}
        return [index.setdefault(it.concept_id, len(index)) for it in self.items]

    def counts(self) -> dict[str, Any]:
        """Sizes for logs and the model card (|O|, |D| after repetition, concepts, singletons)."""
        per_concept = Counter(it.concept_id for it in self.items)
        n_o = sum(it.source == "O" for it in self.items)
        n_d = len(self.items) - n_o
        return {
            "train_data": self.train_data.value,
            "ontology_texts": n_o,
            "domain_texts": n_d,
            "d_over_o": (n_d / n_o) if n_o else None,
            "ratio": self.ratio,
            "concepts": len(per_concept),
            "single_text_concepts": sum(1 for c in per_concept.values() if c < 2),
            "mentions_dropped": dict(self.dropped),
        }


def build_triplet_corpus(
    kg: KnowledgeGraph,
    train_data: TrainData | str = TrainData.O,
    mentions: Iterable[tuple[str, Sequence[str]]] | None = None,
    ratio: float = DEFAULT_OD_RATIO,
    seed: int = 0,
) -> TripletCorpus:
    """The Train:O or Train:OD corpus of ``kg`` (and ``mentions`` for OD)."""
    train_data = TrainData(train_data)
    seen: set[tuple[str, str]] = set()
    onto: list[LabelledText] = []
    for cid, term in zip(kg.terms["concept_id"], kg.terms["term"], strict=True):
        text = str(term).strip()
        if text and (cid, text) not in seen:
            seen.add((cid, text))
            onto.append(LabelledText(text, cid, "O"))
    if train_data is TrainData.O:
        return TripletCorpus(onto, train_data, None)
    if mentions is None:
        raise ValueError("Train:OD needs annotated training mentions (--mentions FILE)")
    domain, dropped = mention_texts(mentions, concept_key_map(kg))
    check_kept("Train:OD", domain, dropped, UNUSABLE)
    repeated = repeat_to_ratio(domain, len(onto), ratio, seed)
    return TripletCorpus(onto + repeated, train_data, ratio, dropped)


class AnchorPositiveSampler:
    """Batches of text indices: P groups × K texts, every anchor with ≥ 1 positive.

    Each epoch visits every eligible text once as an anchor (a seeded permutation) and adds
    K − 1 other texts of its concept, drawn without replacement when the concept has enough,
    else with replacement. Sampling is counter-based: batch number ``n`` depends only on
    ``(seed, n)``, so a resumed run sees the same batches and needs no sampler state.

    Args:
        labels: concept label of each text.
        batch_size: texts per batch (rounded down to a multiple of K; at least 2 groups).
        texts_per_concept: K (≥ 2; the paper's one positive per anchor is K = 2).
        seed: seed of the permutations and positive draws.
    """

    def __init__(
        self, labels: Sequence[int], batch_size: int, texts_per_concept: int = 2, seed: int = 0
    ) -> None:
        if texts_per_concept < 2:
            raise ValueError(f"texts_per_concept (K) must be ≥ 2, got {texts_per_concept}")
        if batch_size < 2 * texts_per_concept:
            raise ValueError(
                f"batch_size {batch_size} holds fewer than 2 groups of K={texts_per_concept}"
            )
        self.k = texts_per_concept
        self.groups_per_batch = batch_size // texts_per_concept
        self.seed = seed
        self.labels = np.asarray(labels, dtype=np.int64)
        members: dict[int, list[int]] = {}
        for i, label in enumerate(self.labels.tolist()):
            members.setdefault(label, []).append(i)
        self.members = {lab: np.asarray(idx) for lab, idx in members.items() if len(idx) > 1}
        if len(self.members) < 2:
            raise ValueError("triplet batches need at least 2 concepts with 2 or more texts")
        self.anchors = np.flatnonzero(np.isin(self.labels, list(self.members)))
        self._order: tuple[int, np.ndarray] | None = None

    @property
    def batches_per_epoch(self) -> int:
        """Batches in one pass over the anchors (the last one may be smaller)."""
        return -(-len(self.anchors) // self.groups_per_batch)

    def _epoch_order(self, epoch: int) -> np.ndarray:
        if self._order is None or self._order[0] != epoch:
            perm = np.random.default_rng([self.seed, epoch]).permutation(self.anchors)
            self._order = (epoch, perm)
        return self._order[1]

    def _positives(self, anchor: int, rng: np.random.Generator) -> list[int]:
        others = self.members[int(self.labels[anchor])]
        others = others[others != anchor]
        replace = len(others) < self.k - 1
        return [int(i) for i in rng.choice(others, size=self.k - 1, replace=replace)]

    def batch_indices(self, number: int) -> list[int]:
        """Text indices of batch ``number`` (0, 1, ...): anchor, its positives, next anchor..."""
        epoch, cursor = divmod(int(number), self.batches_per_epoch)
        start = cursor * self.groups_per_batch
        chunk = self._epoch_order(epoch)[start : start + self.groups_per_batch]
        rng = np.random.default_rng([self.seed, epoch, cursor, 1])
        batch: list[int] = []
        for anchor in chunk:
            batch.append(int(anchor))
            batch.extend(self._positives(int(anchor), rng))
        return batch

    def __iter__(self) -> Iterator[list[int]]:
        number = 0
        while True:
            yield self.batch_indices(number)
            number += 1
